#!/usr/bin/python3
"""The PyTorch side of `bench/pointer_generator_speed.sh`: the pointer-generator with coverage of
`build/bench/pointer_generator_speed` (models/pointer_generator/, See, Liu & Manning 2017),
trained and decoded on random token data of the same shapes.

Same architecture and maths: one embedding table E for source and target (extended ids >= V
read as <unk>) -> bidirectional LSTM (U = H/2 units per direction, outputs [B, S, C = H]);
decoder initial state tanh(W_bridge [h_fwd; h_bwd]), c0 = 0; additive attention with keys
W_k h_i (prepared once per batch), query W_q s_{t-1} and the coverage feature w_c cov_ti, score
v . tanh(k_i + q + w_c cov_ti), masked softmax, context c_t = sum_i alpha_ti h_i; LSTMCell over
[e_{t-1}; c_t]; readout tanh(W_p [s_t; c_t; e_{t-1}]) -> output projection V; p_gen =
sigmoid(w . [c_t; s_t; e_{t-1}] + b); P(w) = p_gen P_vocab(w) + (1 - p_gen) sum_{i: x_i = w}
alpha_ti over the extended vocabulary V + X; loss = -mean log P(y_t) + mean sum_i min(alpha_ti,
cov_ti), no dropout.
A training step = forward + backward + global-norm clipping at 2 + Adam, on one fixed batch.
Decoding: greedy, one article at a time, outputs capped at T tokens, with freshly initialised
weights (rarely <eos>, as on the engram side).

Prints JSON lines: {"meta": {...}} then {"name": ..., "threads": n, "value": x, "unit": ...}.
Run it as bench/pointer_generator_speed.sh does (/usr/bin/python3, OPENBLAS_CORETYPE=SkylakeX
where the CPU has AVX-512, the OpenMP OpenBLAS); glibc malloc is tuned before torch loads.
Dims: B batch, S source len, T target steps, E embedding, U encoder units per direction,
C = 2U = H, H decoder hidden, A attention width (= H), V vocabulary, X extra ids.
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

PAD, UNK, GO, EOS, SPECIAL = 0, 1, 2, 3, 4


class PointerGenerator(nn.Module):
    def __init__(self, vocab, emb=64, hidden=128, coverage=True):
        super().__init__()
        self.vocab, self.coverage = vocab, coverage
        c = hidden
        self.embed = nn.Embedding(vocab, emb)
        self.encoder = nn.LSTM(emb, hidden // 2, bidirectional=True)
        self.bridge = nn.Linear(c, hidden)
        self.key = nn.Linear(c, hidden, bias=False)
        self.query = nn.Linear(hidden, hidden)
        self.cov = nn.Linear(1, hidden, bias=False)
        self.v = nn.Linear(hidden, 1, bias=False)
        self.cell = nn.LSTMCell(emb + c, hidden)
        self.readout = nn.Linear(hidden + c + emb, hidden)
        self.output = nn.Linear(hidden, vocab)
        self.gate = nn.Linear(c + hidden + emb, 1)

    def lookup(self, ids):
        return self.embed(ids.masked_fill(ids >= self.vocab, UNK))

    def encode(self, src):
        """src [S, B] extended ids -> values [B, S, C], keys [B, S, A], (s0, c0) [B, H]."""
        out, (h, _) = self.encoder(self.lookup(src))  # equal lengths: no packing needed
        values = out.transpose(0, 1)
        s0 = torch.tanh(self.bridge(torch.cat([h[0], h[1]], dim=1)))
        return values, self.key(values), (s0, torch.zeros_like(s0))

    def step(self, emb, state, cov, values, keys):
        """One decoder step: e_{t-1} [N, E], state (s, c) -> state, c_t [N, C], score, alpha [N, S]."""
        pre = keys + self.query(state[0]).unsqueeze(1)
        if self.coverage:
            pre = pre + self.cov(cov.unsqueeze(2))
        score = self.v(torch.tanh(pre)).squeeze(2)
        alpha = F.softmax(score, dim=1)
        ctx = torch.bmm(alpha.unsqueeze(1), values).squeeze(1)
        state = self.cell(torch.cat([emb, ctx], dim=1), state)
        return state, ctx, alpha

    def mixture(self, s, ctx, emb, alpha, src_rows, extra):
        """P over V + X [N, V + X] and p_gen [N]; src_rows [N, S] extended ids."""
        vocab = F.softmax(self.output(torch.tanh(self.readout(torch.cat([s, ctx, emb], dim=1)))), dim=1)
        p_gen = torch.sigmoid(self.gate(torch.cat([ctx, s, emb], dim=1)))
        dist = torch.cat([p_gen * vocab, vocab.new_zeros(vocab.shape[0], extra)], dim=1)
        return dist.scatter_add(1, src_rows, (1 - p_gen) * alpha), p_gen.squeeze(1)

    def loss(self, src, tgt_in, tgt_out, extra):
        values, keys, state = self.encode(src)
        b, s_len = src.shape[1], src.shape[0]
        emb = self.lookup(tgt_in)  # [T, B, E]
        cov = values.new_zeros(b, s_len)
        tops, ctxs, alphas, cov_loss = [], [], [], 0
        for t in range(tgt_in.shape[0]):
            state, ctx, alpha = self.step(emb[t], state, cov, values, keys)
            if self.coverage:
                cov_loss = cov_loss + torch.minimum(alpha, cov).sum()
                cov = cov + alpha
            tops.append(state[0])
            ctxs.append(ctx)
            alphas.append(alpha)
        t_len = tgt_in.shape[0]
        src_rows = src.t().repeat(t_len, 1)  # row t*B + b copies from sentence b
        dist, _ = self.mixture(torch.cat(tops), torch.cat(ctxs), emb.reshape(-1, emb.shape[2]), torch.cat(alphas),
                               src_rows, extra)
        p = dist.gather(1, tgt_out.reshape(-1, 1)).squeeze(1)
        tokens = tgt_out.numel()
        return -torch.log(p + 1e-12).mean() + cov_loss / tokens


@torch.no_grad()
def greedy(model, src, max_len):
    """One article src [S, 1]: the greedy output ids (extended), at most max_len."""
    values, keys, state = model.encode(src)
    extra = max(0, int(src.max()) - model.vocab + 1)
    cov = values.new_zeros(1, src.shape[0])
    src_rows = src.t()
    prev = torch.full((1,), GO, dtype=torch.long)
    out = []
    for _ in range(max_len):
        emb = model.lookup(prev)
        state, ctx, alpha = model.step(emb, state, cov, values, keys)
        cov = cov + alpha
        dist, _ = model.mixture(state[0], ctx, emb, alpha, src_rows, extra)
        dist[:, PAD] = 0
        dist[:, GO] = 0
        prev = dist.argmax(1)
        out.append(int(prev))
        if out[-1] == EOS:
            break
    return out


def random_source(s_len, vocab, oov):
    """S ids with `oov` positions holding extended ids V, V+1, ... (first seen first)."""
    ids = torch.randint(SPECIAL, vocab, (s_len,))
    pos = torch.randint(0, s_len, (oov,))
    ids[pos] = vocab + torch.arange(oov)
    mapping, nxt = {}, vocab
    for i in range(s_len):
        v = int(ids[i])
        if v >= vocab:
            if v not in mapping:
                mapping[v] = nxt
                nxt += 1
            ids[i] = mapping[v]
    return ids


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--src-len", type=int, default=400)
    ap.add_argument("--tgt-len", type=int, default=120)
    ap.add_argument("--vocab", type=int, default=10000)
    ap.add_argument("--embed", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--oov", type=int, default=20)
    ap.add_argument("--no-coverage", action="store_true")
    ap.add_argument("--steps", type=int, default=5, help="timed training steps")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--sentences", type=int, default=4, help="articles decoded one at a time")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--what", default="train,greedy")
    args = ap.parse_args()
    openblas = openblas_handle()
    meta = {"torch": torch.__version__, "libraries": loaded_libraries(), "malloc": MALLOC,
            "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
            "openblas": openblas.openblas_get_config().decode() if openblas else None,
            "openblas_core": openblas.openblas_get_corename().decode() if openblas else None}
    print(json.dumps({"meta": meta}), flush=True)
    torch.manual_seed(1)
    cov = not args.no_coverage
    model = PointerGenerator(args.vocab, args.embed, args.hidden, cov)
    b, s_len, t_len, v = args.batch, args.src_len, args.tgt_len, args.vocab
    src = torch.stack([random_source(s_len, v, args.oov) for _ in range(b)], dim=1)  # [S, B]
    extra = max(0, int(src.max()) - v + 1)
    y = torch.randint(SPECIAL, v, (t_len, b))
    for j in range(b):  # a quarter of the target tokens copy the source's extended ids
        ex = int(src[:, j].max()) - v + 1
        if ex > 0:
            pick = torch.rand(t_len) < 0.25
            y[pick, j] = v + torch.randint(0, ex, (int(pick.sum()),))
    tgt_out = torch.cat([y[:-1], torch.full((1, b), EOS)])
    tgt_in = torch.cat([torch.full((1, b), GO), tgt_out[:-1]])
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    fresh = PointerGenerator(v, args.embed, args.hidden, cov)
    sources = [random_source(s_len, v, args.oov).unsqueeze(1) for _ in range(args.sentences)]
    for threads in [int(t) for t in args.threads.split(",")]:
        torch.set_num_threads(threads)
        if openblas is not None:
            openblas.openblas_set_num_threads(threads)
        if "train" in args.what:
            def step():
                opt.zero_grad()
                loss = model.loss(src, tgt_in, tgt_out, extra)
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 2.0)
                opt.step()
                return float(loss)
            for _ in range(args.warmup):
                step()
            t0 = time.perf_counter()
            for _ in range(args.steps):
                loss = step()
            sec = (time.perf_counter() - t0) / args.steps
            print(json.dumps({"name": "train", "threads": threads, "value": sec * 1e3, "unit": "ms/step",
                              "tokens_per_s": b * t_len / sec, "loss": loss}), flush=True)
        if "greedy" in args.what:
            for src1 in sources[:1]:
                greedy(fresh, src1, t_len)  # warm-up
            t0 = time.perf_counter()
            tokens = sum(len(greedy(fresh, src1, t_len)) for src1 in sources)
            rate = args.sentences / (time.perf_counter() - t0)
            print(json.dumps({"name": "greedy batch 1", "threads": threads, "value": rate, "unit": "articles/s",
                              "tokens_per_output": tokens / args.sentences}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
