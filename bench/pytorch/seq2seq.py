#!/usr/bin/python3
"""The PyTorch side of `bench/seq2seq_speed.sh`: the attention encoder-decoder of
`build/bench/seq2seq_speed` (models/seq2seq/, Bahdanau style), trained and decoded on random token data.

Same architecture and maths: source embedding E -> bidirectional GRU (U units per direction,
outputs [S, B, C = 2U]); decoder initial state tanh(W_bridge [h_fwd; h_bwd]); additive attention
with keys W_k h_i (prepared once per batch), query W_q s_{t-1}, score v . tanh(q + k_i), masked
softmax, context c_t = sum_i alpha_ti h_i; GRUCell over [e_{t-1}; c_t]; readout
tanh(W_p [s_t; c_t; e_{t-1}]) -> output projection V; label-smoothed cross-entropy (0.1), no dropout.
A training step = forward + backward + global-norm clipping at 1 + Adam, on one fixed batch.
Decoding: greedy and beam search (per sentence the K best prefixes by log-probability, finished
hypotheses kept, stops when every sentence's beams are finished or at the cap) over N sources,
batched (all N together) and one sentence at a time, outputs capped at T tokens.

Prints JSON lines: {"meta": {...}} then {"name": ..., "threads": n, "value": x, "unit": ...}.
Run it as bench/seq2seq_speed.sh does (/usr/bin/python3, OPENBLAS_CORETYPE=SkylakeX, the
OpenMP OpenBLAS); glibc malloc is tuned below before torch loads (DESIGN.md).
Dims: B batch, S source len, T target steps, E embedding, U encoder units per direction,
C = 2U, H decoder hidden, A attention width, P readout width (= H), V vocab, K beam.
"""
import argparse
import copy
import json
import os
import sys
import time

from torch_env import MALLOC, loaded_libraries, openblas_handle  # noqa: E402  (tunes malloc before torch loads)

import torch  # noqa: E402  (after mallopt)
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

PAD, GO, EOS, SPECIAL = 0, 2, 3, 4


class Seq2Seq(nn.Module):
    def __init__(self, vocab, emb=256, units=512, hidden=512, attn=None, layers=1):
        super().__init__()
        c = 2 * units
        attn = attn or hidden  # engram's attn_dim 0 = H
        self.src_embed = nn.Embedding(vocab, emb)
        self.tgt_embed = nn.Embedding(vocab, emb)
        self.encoder = nn.GRU(emb, units, num_layers=layers, bidirectional=True)
        self.bridge = nn.Linear(c, hidden)
        self.key = nn.Linear(c, attn, bias=False)
        self.query = nn.Linear(hidden, attn)
        self.v = nn.Linear(attn, 1, bias=False)
        self.cell = nn.GRUCell(emb + c, hidden)
        self.readout = nn.Linear(hidden + c + emb, hidden)
        self.output = nn.Linear(hidden, vocab)

    def encode(self, src, src_len):
        """src [S, B] -> values [B, S, C], keys [B, S, A], mask [B, S], s0 [B, H]."""
        out, h = self.encoder(self.src_embed(src))  # equal lengths here: no packing needed
        values = out.transpose(0, 1)
        keys = self.key(values)
        mask = torch.arange(src.shape[0]).unsqueeze(0) < src_len.unsqueeze(1)
        s0 = torch.tanh(self.bridge(torch.cat([h[-2], h[-1]], dim=1)))  # the top layer's two directions
        return values, keys, mask, s0

    def step(self, emb, s, values, keys, mask):
        """One decoder step: (e_{t-1} [N, E], s_{t-1} [N, H]) -> s_t, c_t [N, C], alpha [N, S]."""
        score = self.v(torch.tanh(keys + self.query(s).unsqueeze(1))).squeeze(2)
        alpha = F.softmax(score.masked_fill(~mask, float("-inf")), dim=1)
        ctx = torch.bmm(alpha.unsqueeze(1), values).squeeze(1)
        s = self.cell(torch.cat([emb, ctx], dim=1), s)
        return s, ctx, alpha

    def logits(self, s, ctx, emb):
        return self.output(torch.tanh(self.readout(torch.cat([s, ctx, emb], dim=1))))

    def loss(self, src, src_len, tgt_in, tgt_out):
        values, keys, mask, s = self.encode(src, src_len)
        emb = self.tgt_embed(tgt_in)  # [T, B, E]
        tops, ctxs = [], []
        for t in range(tgt_in.shape[0]):
            s, ctx, _ = self.step(emb[t], s, values, keys, mask)
            tops.append(s)
            ctxs.append(ctx)
        logits = self.logits(torch.cat(tops), torch.cat(ctxs), emb.reshape(-1, emb.shape[2]))
        return F.cross_entropy(logits, tgt_out.reshape(-1), ignore_index=PAD, label_smoothing=0.1)


@torch.no_grad()
def greedy(model, src, src_len, max_len):
    values, keys, mask, s = model.encode(src, src_len)
    b = src.shape[1]
    prev = torch.full((b,), GO, dtype=torch.long)
    done = torch.zeros(b, dtype=torch.bool)
    out = []
    for _ in range(max_len):
        emb = model.tgt_embed(prev)
        s, ctx, _ = model.step(emb, s, values, keys, mask)
        prev = F.log_softmax(model.logits(s, ctx, emb), dim=1).argmax(1)
        out.append(prev)
        done |= prev == EOS
        if bool(done.all()):
            break
    return torch.stack(out)


@torch.no_grad()
def beam(model, src, src_len, k, max_len):
    """Batched beam search: rows = B * K beams, top-K over K * V candidates per sentence."""
    values, keys, mask, s = model.encode(src, src_len)
    b = src.shape[1]
    rep = lambda x: x.repeat_interleave(k, dim=0)  # noqa: E731
    values, keys, mask, s = rep(values), rep(keys), rep(mask), rep(s)
    scores = torch.full((b, k), float("-inf"))
    scores[:, 0] = 0  # one live beam per sentence at the start
    prev = torch.full((b * k,), GO, dtype=torch.long)
    finished = torch.zeros(b, k, dtype=torch.bool)
    history = []
    for _ in range(max_len):
        emb = model.tgt_embed(prev)
        s, ctx, _ = model.step(emb, s, values, keys, mask)
        lp = F.log_softmax(model.logits(s, ctx, emb), dim=1)  # [B*K, V]
        lp[finished.reshape(-1)] = float("-inf")  # finished beams stay as they are
        lp[finished.reshape(-1), EOS] = 0
        v = lp.shape[1]
        cand = (scores.reshape(-1, 1) + lp).reshape(b, k * v)
        scores, idx = cand.topk(k, dim=1)
        origin = idx // v + torch.arange(b).unsqueeze(1) * k  # [B, K] source rows
        prev = (idx % v).reshape(-1)
        s = s[origin.reshape(-1)]
        finished = finished.reshape(-1)[origin.reshape(-1)].reshape(b, k) | (prev == EOS).reshape(b, k)
        history.append((origin, prev))
        if bool(finished.all()):
            break
    return scores, history


def random_ids(shape, vocab):
    return torch.randint(SPECIAL, vocab, shape)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--src-len", type=int, default=20)
    ap.add_argument("--tgt-len", type=int, default=20)
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--units", type=int, default=512, help="encoder units per direction (engram encoder_hidden)")
    ap.add_argument("--hidden", type=int, default=512, help="decoder hidden size H (engram hidden)")
    ap.add_argument("--layers", type=int, default=1, help="encoder layers (engram encoder_layers)")
    ap.add_argument("--steps", type=int, default=3, help="timed training steps")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--sentences", type=int, default=64)
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--what", default="train,greedy,beam")
    ap.add_argument("--precision", default="fp32",
                    help="decoding precisions, comma list of fp32, bf16, int8 (bf16: the model cast to bfloat16; "
                         "int8: quantize_dynamic of its Linear, GRU and GRUCell modules on the onednn engine)")
    args = ap.parse_args()
    openblas = openblas_handle()
    meta = {"torch": torch.__version__, "libraries": loaded_libraries(), "malloc": MALLOC,
            "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
            "openblas": openblas.openblas_get_config().decode() if openblas else None,
            "openblas_core": openblas.openblas_get_corename().decode() if openblas else None}
    print(json.dumps({"meta": meta}), flush=True)
    torch.manual_seed(1)
    shape = dict(units=args.units, hidden=args.hidden, layers=args.layers)
    model = Seq2Seq(args.vocab, **shape)
    b, s_len, t_len = args.batch, args.src_len, args.tgt_len
    src = random_ids((s_len, b), args.vocab)
    src_len = torch.full((b,), s_len)
    y = random_ids((t_len, b), args.vocab)
    tgt_in = torch.cat([torch.full((1, b), GO), y[:-1]])
    tgt_out = torch.cat([y[:-1], torch.full((1, b), EOS)])
    sources = random_ids((s_len, args.sentences), args.vocab)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    fresh = Seq2Seq(args.vocab, **shape)  # decoding: untrained weights (rarely <eos>), as on the engram side
    decoders = {"fp32": fresh}
    if "bf16" in args.precision:
        decoders["bf16"] = copy.deepcopy(fresh).to(torch.bfloat16)
    if "int8" in args.precision:
        if "onednn" in torch.backends.quantized.supported_engines:
            torch.backends.quantized.engine = "onednn"
        decoders["int8"] = torch.ao.quantization.quantize_dynamic(copy.deepcopy(fresh), {nn.Linear, nn.GRU, nn.GRUCell},
                                                                  dtype=torch.qint8)
    for threads in [int(t) for t in args.threads.split(",")]:
        torch.set_num_threads(threads)
        if openblas is not None:
            openblas.openblas_set_num_threads(threads)
        if "train" in args.what:
            def step():
                opt.zero_grad()
                loss = model.loss(src, src_len, tgt_in, tgt_out)
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
            for _ in range(args.warmup):
                step()
            t0 = time.perf_counter()
            for _ in range(args.steps):
                step()
            sec = (time.perf_counter() - t0) / args.steps
            print(json.dumps({"name": "train", "threads": threads, "value": sec * 1e3, "unit": "ms/step",
                              "tokens_per_s": b * t_len / sec}), flush=True)
        for precision, kind in [(p, k) for p in args.precision.split(",") for k in ("greedy", "beam")]:
            if kind not in args.what:
                continue
            decoder = decoders[precision]
            for per_call in (args.sentences, 1):
                def run_all():
                    for i in range(0, args.sentences, per_call):
                        chunk = sources[:, i:i + per_call]
                        lens = torch.full((chunk.shape[1],), s_len)
                        if kind == "greedy":
                            greedy(decoder, chunk, lens, t_len)
                        else:
                            beam(decoder, chunk, lens, args.beam, t_len)
                run_all()  # warm-up
                t0 = time.perf_counter()
                run_all()
                rate = args.sentences / (time.perf_counter() - t0)
                name = ("greedy" if kind == "greedy" else f"beam {args.beam}") + ("" if precision == "fp32" else f" {precision}")
                print(json.dumps({"name": f"{name} batch {per_call}", "threads": threads, "value": rate,
                                  "unit": "sentences/s"}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
