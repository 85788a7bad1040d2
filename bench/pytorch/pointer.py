#!/usr/bin/python3
"""The PyTorch side of `bench/pointer_speed.sh`: the Pointer Network of `build/bench/pointer_speed`
(models/pointer/, Vinyals, Fortunato & Jaitly 2015) on random planar TSP instances of the same
shapes, measured in training sequences/s and greedy decoding instances/s.

Same architecture and maths: each point x_j in [0, 1]^2 embedded by a linear layer (E); LSTM
encoder E -> H over the n points; the memory pointed into is [end; e_1 .. e_n] with a learned
end vector (class 0 = end, class j + 1 = point j); LSTM decoder E -> H with h0 = the encoder's
last state, c0 = 0, first input a learned <go> vector, then the embedding of the point pointed at
the step before (teacher forcing in training); additive pointer u_j = v . tanh(W1 m_j + W2 d_i)
(no biases; keys W1 m_j prepared once per batch), masked log-softmax over the n + 1 classes.
The TSP rules mask every step: city 0 first, each city once, the end only after all n.
A training step = forward + backward (the NLL summed over steps, mean over the batch) +
global-norm clipping at 2 + Adam, on one fixed batch whose targets are random tours from city 0.
The pointer of the T = n + 1 teacher-forced steps is computed step by step (--pointer loop, the
default) or for all steps at once ([B, T, n + 1, A]; --pointer batched). Step by step was the
faster on this machine at both n (2026-12-01, one thread, processor time per sequence: n = 10
0.55 vs 0.58 ms, n = 50 4.9 vs 10.2 ms), so it is PyTorch's figure; --pointer batched,loop
measures both and the faster counts.
Decoding: greedy with the masks, every instance n + 1 steps (the rules fix the length): a batch
of B instances at once, and instances one at a time (B = 1), with freshly initialised weights.

Prints JSON lines: {"meta": {...}} then {"name": ..., "n": n, "threads": t, "value": x, "unit": ...}.
Run it as bench/pointer_speed.sh does (/usr/bin/python3, OPENBLAS_CORETYPE=SkylakeX where the
CPU has AVX-512, the OpenMP OpenBLAS); glibc malloc is tuned before torch loads.
Dims: B batch, n points, V = n + 1 classes, T = n + 1 steps, F = 2 features, E embedding,
H hidden, A = H attention width.
"""
import argparse
import json
import os
import sys
import time

from torch_env import MALLOC, loaded_libraries, openblas_handle  # noqa: E402  (tunes malloc before torch loads)

import torch  # noqa: E402  (after mallopt)
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

NEG = -1e30


class PointerNet(nn.Module):
    def __init__(self, features=2, emb=128, hidden=256):
        super().__init__()
        self.embed = nn.Linear(features, emb)
        self.encoder = nn.LSTM(emb, hidden)
        self.decoder = nn.LSTM(emb, hidden)
        self.go = nn.Parameter(torch.empty(emb).uniform_(-0.08, 0.08))
        self.end = nn.Parameter(torch.empty(hidden).uniform_(-0.08, 0.08))
        self.w_key = nn.Linear(hidden, hidden, bias=False)    # W1
        self.w_query = nn.Linear(hidden, hidden, bias=False)  # W2
        self.v = nn.Linear(hidden, 1, bias=False)

    def encode(self, points):
        """points [n, B, F] -> embedded [n, B, E], keys [B, V, A], (h0, c0) [1, B, H]."""
        emb = self.embed(points)
        out, (h, _) = self.encoder(emb)
        b = points.shape[1]
        memory = torch.cat([self.end.expand(1, b, -1), out]).transpose(0, 1)  # [B, V, H]
        return emb, self.w_key(memory), (h, torch.zeros_like(h))

    def decoder_inputs(self, emb, tours):
        """[T, B, E]: <go>, then the embeddings pointed at."""
        b = emb.shape[1]
        prev = emb[tours.t(), torch.arange(b)]                            # [n, B, E]
        return torch.cat([self.go.expand(1, b, -1), prev])

    def run_decoder(self, x, state):
        return self.decoder(x, state)[0]

    def loss(self, points, tours, pointer="batched"):
        """points [n, B, F], tours [B, n] (city 0 first) -> Σ NLL / B."""
        n, b = points.shape[0], points.shape[1]
        emb, keys, state = self.encode(points)
        dec = self.run_decoder(self.decoder_inputs(emb, tours), state)   # [T, B, H]
        classes = torch.cat([tours + 1, torch.zeros(b, 1, dtype=torch.long)], dim=1)  # [B, T]
        # allowed[b, t, c]: the TSP rules of the teacher prefix.
        t_len = n + 1
        visited = F.one_hot(classes[:, :-1], n + 1).cumsum(1)            # [B, n, V] classes out after step t
        used = torch.cat([torch.zeros(b, 1, n + 1, dtype=torch.long), visited], dim=1) > 0  # [B, T, V]
        allowed = ~used
        allowed[:, :, 0] = False
        allowed[:, -1, 0] = True                                         # end only after all n
        allowed[:, 0, 2:] = False                                        # city 0 first
        q = self.w_query(dec).transpose(0, 1)                            # [B, T, A]
        if pointer == "batched":
            u = self.v(torch.tanh(keys.unsqueeze(1) + q.unsqueeze(2))).squeeze(3)  # [B, T, V]
        else:
            u = torch.stack([self.v(torch.tanh(keys + q[:, t:t + 1])).squeeze(2) for t in range(t_len)], dim=1)
        lp = F.log_softmax(u.masked_fill(~allowed, NEG), dim=2)
        return -lp.gather(2, classes.unsqueeze(2)).sum() / b


class FoldedPointerNet(PointerNet):
    """The same model and parameters, with the linear embedding folded into both LSTMs' input
    weights as engram does (nn::Rnn::project_embedded): x (W_ih W_emb)^T + (W_ih b_emb + b_ih), a
    [4H, F] product instead of [E, F] then [4H, E]; autograd gives the gradients of W_ih, W_emb and
    b_emb through the fold. The decoder's <go> input rides on a third feature (1 at step 0):
    W_ih (go - b_emb) is its column. `--fold` measures PyTorch given this by hand."""

    def folded(self, lstm, go=None):
        w_ih, b_ih = lstm.weight_ih_l0, lstm.bias_ih_l0
        w = w_ih @ self.embed.weight                                   # [4H, F]
        b = w_ih @ self.embed.bias + b_ih                              # [4H]
        if go is not None:
            w = torch.cat([w, (w_ih @ (go - self.embed.bias)).unsqueeze(1)], dim=1)  # [4H, F + 1]
        return w, b

    def encode(self, points):
        w, b = self.folded(self.encoder)
        enc = self.encoder
        out, h, _ = torch._VF.lstm(points, (points.new_zeros(1, points.shape[1], enc.hidden_size),) * 2,
                                   [w, enc.weight_hh_l0, b, enc.bias_hh_l0], True, 1, 0.0, self.training, False,
                                   False)
        bsz = points.shape[1]
        memory = torch.cat([self.end.expand(1, bsz, -1), out]).transpose(0, 1)  # [B, V, H]
        return points, self.w_key(memory), (h, torch.zeros_like(h))

    def decoder_inputs(self, points, tours):
        """[T, B, F + 1]: <go> as the indicator feature, then the points pointed at."""
        n, b = points.shape[0], points.shape[1]
        rows = torch.arange(b)
        prev = torch.cat([points[tours.t(), rows], points.new_zeros(n, b, 1)], dim=2)
        go = torch.cat([points.new_zeros(1, b, points.shape[2]), points.new_ones(1, b, 1)], dim=2)
        return torch.cat([go, prev])

    def run_decoder(self, x, state):
        w, b = self.folded(self.decoder, self.go)
        dec = self.decoder
        out, _, _ = torch._VF.lstm(x, state, [w, dec.weight_hh_l0, b, dec.bias_hh_l0], True, 1, 0.0, self.training,
                                   False, False)
        return out


def point_greedily(model, keys, h, allowed, t, n, rows):
    """Step t of greedy decoding under the TSP rules: the pointer over keys [B, V] from h [B, H],
    the class picked per row (marked used in `allowed`)."""
    u = model.v(torch.tanh(keys + model.w_query(h).unsqueeze(1))).squeeze(2)  # [B, V]
    mask = allowed.clone()
    if t == 0:
        mask[:, 2:] = False
    elif t == n:
        mask[:, 1:] = False
        mask[:, 0] = True
    pick = F.log_softmax(u.masked_fill(~mask, NEG), dim=1).argmax(1)
    allowed[rows, pick] = False
    return pick


@torch.inference_mode()
def greedy_folded(model, points):
    """greedy() of a FoldedPointerNet: the decoder's input gates of every point and of <go> are one
    product at encoding; a step gathers its rows and multiplies by W_hh only."""
    n, b = points.shape[0], points.shape[1]
    _, keys, (h, c) = model.encode(points)
    h, c = h[0], c[0]
    w, bias = model.folded(model.decoder, model.go)
    table = points @ w[:, :-1].t() + bias                              # [n, B, 4H]
    gx = (w[:, -1] + bias).expand(b, -1)                               # <go>
    w_hh, b_hh = model.decoder.weight_hh_l0, model.decoder.bias_hh_l0
    allowed = torch.ones(b, n + 1, dtype=torch.bool)
    allowed[:, 0] = False
    rows = torch.arange(b)
    out = []
    for t in range(n + 1):
        gates = torch.addmm(gx + b_hh, h, w_hh.t())
        i, f, g, o = gates.chunk(4, 1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        pick = point_greedily(model, keys, h, allowed, t, n, rows)
        out.append(pick)
        if t < n:
            gx = table[pick - 1, rows]
    return torch.stack(out, dim=1)


@torch.inference_mode()
def greedy(model, points):
    """points [n, B, F] -> tours [B, n + 1] (classes, the end last), greedy under the TSP rules."""
    n, b = points.shape[0], points.shape[1]
    emb, keys, (h, c) = model.encode(points)
    h, c = h[0], c[0]
    cell = model.decoder
    w_ih, w_hh, b_ih, b_hh = cell.weight_ih_l0, cell.weight_hh_l0, cell.bias_ih_l0, cell.bias_hh_l0
    allowed = torch.ones(b, n + 1, dtype=torch.bool)
    allowed[:, 0] = False
    rows = torch.arange(b)
    x = model.go.expand(b, -1)
    out = []
    for t in range(n + 1):
        h, c = torch._VF.lstm_cell(x, (h, c), w_ih, w_hh, b_ih, b_hh)
        pick = point_greedily(model, keys, h, allowed, t, n, rows)
        out.append(pick)
        if t < n:
            x = emb[pick - 1, rows]
    return torch.stack(out, dim=1)


def random_tours(b, n, gen):
    """[B, n]: city 0, then a random order of 1 .. n-1."""
    rest = torch.argsort(torch.rand(b, n - 1, generator=gen), dim=1) + 1
    return torch.cat([torch.zeros(b, 1, dtype=torch.long), rest], dim=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--n", default="10,50", help="points per instance, a comma list")
    ap.add_argument("--embed", type=int, default=128)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--steps", type=int, default=5, help="timed training steps")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--decode-batches", type=int, default=2, help="timed batches of B instances decoded")
    ap.add_argument("--singles", type=int, default=20, help="instances decoded one at a time")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--what", default="train,greedy,single")
    ap.add_argument("--fold", action="store_true",
                    help="fold the embedding into the LSTMs' input weights by hand, as engram does (FoldedPointerNet)")
    ap.add_argument("--pointer", default="loop",
                    help="training pointer forms measured (comma list of batched, loop; the better one counts)")
    args = ap.parse_args()
    openblas = openblas_handle()
    meta = {"torch": torch.__version__, "libraries": loaded_libraries(), "malloc": MALLOC,
            "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
            "openblas": openblas.openblas_get_config().decode() if openblas else None,
            "openblas_core": openblas.openblas_get_corename().decode() if openblas else None,
            "pointer": args.pointer, "fold": args.fold}
    print(json.dumps({"meta": meta}), flush=True)
    torch.manual_seed(1)
    gen = torch.Generator().manual_seed(7)
    what = args.what.split(",")
    b = args.batch
    for n in [int(v) for v in args.n.split(",")]:
        net = FoldedPointerNet if args.fold else PointerNet
        decode = greedy_folded if args.fold else greedy
        model = net(2, args.embed, args.hidden)
        fresh = net(2, args.embed, args.hidden)
        opt = torch.optim.Adam(model.parameters(), lr=1e-4)
        points = torch.rand(n, b, 2, generator=gen)
        tours = random_tours(b, n, gen)
        singles = [torch.rand(n, 1, 2, generator=gen) for _ in range(args.singles)]
        for threads in [int(t) for t in args.threads.split(",")]:
            torch.set_num_threads(threads)
            if openblas is not None:
                openblas.openblas_set_num_threads(threads)
            for mode in (args.pointer.split(",") if "train" in what else []):
                def step():
                    opt.zero_grad()
                    loss = model.loss(points, tours, mode)
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), 2.0)
                    opt.step()
                    return float(loss)
                for _ in range(args.warmup):
                    step()
                t0, c0 = time.perf_counter(), time.process_time()
                for _ in range(args.steps):
                    loss = step()
                sec = (time.perf_counter() - t0) / args.steps
                cpu = (time.process_time() - c0) * 1e3 / (args.steps * b)
                print(json.dumps({"name": "train", "n": n, "threads": threads, "mode": mode, "value": b / sec,
                                  "unit": "sequences/s", "cpu_ms": cpu, "ms_per_step": sec * 1e3, "loss": loss}),
                      flush=True)
            if "greedy" in what:
                decode(fresh, points)  # warm-up
                t0, c0 = time.perf_counter(), time.process_time()
                for _ in range(args.decode_batches):
                    out = decode(fresh, points)
                rate = args.decode_batches * b / (time.perf_counter() - t0)
                cpu = (time.process_time() - c0) * 1e3 / (args.decode_batches * b)
                print(json.dumps({"name": "greedy batch", "n": n, "threads": threads, "value": rate,
                                  "unit": "instances/s", "cpu_ms": cpu, "steps": int(out.shape[1])}), flush=True)
            if "single" in what:
                decode(fresh, singles[0])  # warm-up
                t0, c0 = time.perf_counter(), time.process_time()
                for p in singles:
                    decode(fresh, p)
                rate = len(singles) / (time.perf_counter() - t0)
                cpu = (time.process_time() - c0) * 1e3 / len(singles)
                print(json.dumps({"name": "greedy single", "n": n, "threads": threads, "value": rate,
                                  "unit": "instances/s", "cpu_ms": cpu}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
