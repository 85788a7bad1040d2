#!/usr/bin/python3
"""The PyTorch side of `bench/memn2n_speed.sh`: an End-To-End Memory Network of the same
configuration as `build/bench/memn2n_speed` (models/memn2n/), trained on the bAbI 1k tasks jointly,
measured in training questions per second.

Same model, data and update: vocabulary over the train and test files of all 20 tasks, memory =
the 50 most recent statements, batches of B questions padded to the longest sentence, position encoding of the authors' code (engram's pe_global; --pe paper for the paper's formula),
temporal encoding (random-noise time indices), K = 3 hops with adjacent tying (B = A^1,
A^{k+1} = C^k, W = C^K), memories padded to 50 slots with the empty ones in the softmax (engram's
null_slots; --null-slots 0: padded to the batch's largest, masked), summed cross-entropy, global
gradient-norm clipping at 40, plain SGD (lr 0.005). One update = forward + backward + clip + step.
Batches are built before the clock starts (the engram side builds them inside its timed loop), so
PyTorch is timed on the model work alone.

Prints one JSON object per line:
  {"meta": {...}}   torch version, BLAS and kernels loaded, malloc tuning
  {"name": "memn2n-babi", "batch": B, "threads": n, "q_per_s": median, "min": x, "max": x, "repeats": r, "steps": s}
Run it as bench/memn2n_speed.sh does: /usr/bin/python3 with OPENBLAS_CORETYPE=SkylakeX.
Dims: B batch, N memory slots, W words per sentence, Wq question words, V vocab, D width, K hops.
"""
import argparse
import glob
import json
import math
import os
import random
import re
import statistics
import sys
import time

from torch_env import MALLOC, loaded_libraries, openblas_handle  # noqa: E402  (tunes malloc before torch loads)

import torch  # noqa: E402  (after mallopt)
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"


def tokenize(text):
    """data/babi.h: whitespace split, strip ASCII punctuation at both ends, lowercase."""
    return [t for t in (w.strip(PUNCT).lower() for w in text.split()) if t]


def read_babi(path, memory_size):
    """-> list of (memory sentences, question tokens, answer) like data::read_babi_file."""
    samples, story = [], []
    for line in open(path):
        line = line.rstrip("\n")
        if not line.strip():
            continue
        sid, text = line.split(" ", 1)
        if int(sid) == 1:
            story = []
        if "\t" in text:
            q, a, _ = text.split("\t")
            samples.append((story[-memory_size:], tokenize(q), a.lower()))
        else:
            story.append(tokenize(text))
    return samples


def load(data_dir, memory_size):
    train, vocab_sets = [], []
    for t in range(1, 21):
        files = {k: glob.glob(os.path.join(data_dir, f"qa{t}_*_{k}.txt")) for k in ("train", "test")}
        if not files["train"] or not files["test"]:
            continue
        tr = read_babi(files["train"][0], memory_size)
        te = read_babi(files["test"][0], memory_size)
        n_valid = round(0.1 * len(tr))
        train += tr[: len(tr) - n_valid]  # (which 10% is held out does not change the speed)
        vocab_sets += [tr, te]
    counts = {}
    for s in vocab_sets:
        for mem, q, a in s:
            for w in [w for sent in mem for w in sent] + q + [a]:
                counts[w] = counts.get(w, 0) + 1
    words = ["<pad>", "<unk>", "<go>", "<eos>"] + sorted(counts, key=lambda w: (-counts[w], w))
    index = {w: i for i, w in enumerate(words)}
    enc = [([[index[w] for w in s] for s in mem], [index[w] for w in q], index[a]) for mem, q, a in train]
    longest = max(max([len(q)] + [len(x) for x in mem]) for s in vocab_sets for mem, q, _ in s)
    return enc, len(words), longest


def pe_weights(ids, global_j):
    """ids [..., W] (0 = pad) -> (a, b) [..., W], the position encoding factored as
    l_kj = a_j + c_k b_j so that sum_j l_j * A x_j = bag(a) + c * bag(b): two weighted EmbeddingBag
    sums, no [..., W, D] tensor. The paper's l_kj = (1 - j/J) - (k/D)(1 - 2j/J), J = the sentence's
    length: a_j = 1 - j/J, b_j = 1 - 2j/J, c_k = -k/D. The authors' code's (global_j = J for all
    sentences) 1 + 4 (k - (D+1)/2)(j - (J+1)/2) / (D J): a_j = 1, b_j = (j - (J+1)/2) / J,
    c_k = 4 (k - (D+1)/2) / D. Padding weighs 0."""
    w = ids.shape[-1]
    j = torch.arange(1, w + 1, dtype=torch.float32)
    nonpad = ids != 0
    if global_j:
        return nonpad.float(), ((j - (global_j + 1) / 2) / global_j) * nonpad
    length = (nonpad * j).amax(-1, keepdim=True).clamp(min=1)  # index of the last word
    fj = j / length
    return (1 - fj) * nonpad, (1 - 2 * fj) * nonpad


def pe_dims(dim, global_j):
    """c_k of pe_weights: [D]."""
    k = torch.arange(1, dim + 1, dtype=torch.float32)
    return 4 * (k - (dim + 1) / 2) / dim if global_j else -k / dim


def make_batch(samples, memory_size, rn, rng, global_j, null_slots):
    b = len(samples)
    n = memory_size if null_slots else max(1, max(len(m) for m, _, _ in samples))
    w = max(1, max(len(s) for m, _, _ in samples for s in m))
    wq = max(len(q) for _, q, _ in samples)
    mem = torch.zeros(b, n, w, dtype=torch.long)
    time_ix = torch.zeros(b, n, dtype=torch.long)  # 0 = empty slot, else time + 1
    query = torch.zeros(b, wq, dtype=torch.long)
    for i, (m, q, _) in enumerate(samples):
        for k, s in enumerate(m):
            mem[i, k, : len(s)] = torch.tensor(s)
        nb = rng.randint(0, math.ceil(len(m) * rn))
        rt = sorted((min(t, memory_size - 1) for t in rng.sample(range(len(m) + nb), len(m))), reverse=True)
        time_ix[i, : len(m)] = torch.tensor(rt, dtype=torch.long) + 1
        query[i, : len(q)] = torch.tensor(q)
    answer = torch.tensor([a for _, _, a in samples])
    mask = None if null_slots else time_ix > 0  # null slots: empty slots stay in the softmax
    return mem, pe_weights(mem, global_j), time_ix, mask, query, pe_weights(query, global_j), answer


class MemN2N(nn.Module):
    """Adjacent tying: tables[0] = A^1 = B, tables[k] = C^k = A^{k+1}, tables[K] = C^K = W."""

    def __init__(self, vocab, dim, hops, memory_size, global_j):
        super().__init__()
        self.hops = hops
        self.words = nn.ParameterList([nn.Parameter(torch.randn(vocab, dim) * 0.1) for _ in range(hops + 1)])
        # temporal tables: row 0 = empty slot (kept zero), row t + 1 = time index t
        self.times = nn.ParameterList([nn.Parameter(torch.randn(memory_size + 1, dim) * 0.1) for _ in range(hops + 1)])
        with torch.no_grad():
            for t in self.times:
                t[0].zero_()

        self.c = pe_dims(dim, global_j)  # [D]

    def bag(self, k, ids, pe):
        """sum_j l_j * table[ids_j] over the last axis of ids [..., W] -> [..., D]."""
        a, b = pe
        flat = ids.reshape(-1, ids.shape[-1])
        sa = F.embedding_bag(flat, self.words[k], mode="sum", per_sample_weights=a.reshape(flat.shape))
        sb = F.embedding_bag(flat, self.words[k], mode="sum", per_sample_weights=b.reshape(flat.shape))
        return (sa + self.c * sb).reshape(*ids.shape[:-1], -1)

    def embed(self, k, mem, pe, time_ix):
        return self.bag(k, mem, pe) + F.embedding(time_ix, self.times[k], padding_idx=0)  # [B, N, D]

    def forward(self, mem, pe, time_ix, mask, query, qpe):
        u = self.bag(0, query, qpe)                                    # [B, D]
        m = self.embed(0, mem, pe, time_ix)
        for k in range(self.hops):
            c = self.embed(k + 1, mem, pe, time_ix)
            s = torch.bmm(m, u.unsqueeze(2)).squeeze(2)
            if mask is not None:
                s = s.masked_fill(~mask, float("-inf"))
            p = F.softmax(s, dim=1)                                    # [B, N]
            u = u + torch.bmm(p.unsqueeze(1), c).squeeze(1)
            m = c
        return u @ self.words[self.hops].t()                           # [B, V]


def measure(data, vocab, args):
    torch.manual_seed(1)
    rng = random.Random(1)
    global_j = args.longest + 1 if args.pe == "global" else 0  # + 1: the authors' time word
    model = MemN2N(vocab, args.dim, args.hops, args.memory_size, global_j)
    opt = torch.optim.SGD(model.parameters(), lr=0.005)
    order = list(range(len(data)))
    rng.shuffle(order)
    total = args.warmup + args.steps
    batches = []
    for i in range(total):
        start = (i * args.batch) % (len(order) - args.batch)
        batches.append(make_batch([data[j] for j in order[start:start + args.batch]], args.memory_size, args.rn,
                                  rng, global_j, args.null_slots))

    def update(batch):
        mem, pe, time_ix, mask, query, qpe, answer = batch
        loss = F.cross_entropy(model(mem, pe, time_ix, mask, query, qpe), answer, reduction="sum")
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 40.0)
        opt.step()
        with torch.no_grad():
            for t in model.times:
                t[0].zero_()

    for b in batches[: args.warmup]:
        update(b)
    t0 = time.perf_counter()
    for b in batches[args.warmup:]:
        update(b)
    return args.steps * args.batch / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join(os.environ.get("ENGRAM_DATA_DIR", "../shared/data"), "babi/en"))
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--dim", type=int, default=50)
    ap.add_argument("--hops", type=int, default=3)
    ap.add_argument("--memory-size", type=int, default=50)
    ap.add_argument("--rn", type=float, default=0.1)
    ap.add_argument("--pe", choices=["paper", "global"], default="global",
                    help="paper: J per sentence; global: the authors' code (engram's pe_global)")
    ap.add_argument("--null-slots", type=int, default=1, help="1: pad to memory_size, empty slots in the softmax")
    ap.add_argument("--threads", default="1,2", help="thread counts (the best is the bar)")
    ap.add_argument("--steps", type=int, default=200, help="timed updates per measurement")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=1, help="measurements per thread count")
    args = ap.parse_args()
    data, vocab, args.longest = load(args.data, args.memory_size)
    openblas = openblas_handle()
    meta = {"torch": torch.__version__, "libraries": loaded_libraries(), "malloc": MALLOC,
            "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
            "cpu_capability": torch.backends.cpu.get_cpu_capability()
            if hasattr(torch.backends, "cpu") and hasattr(torch.backends.cpu, "get_cpu_capability") else None,
            "openblas": openblas.openblas_get_config().decode() if openblas else None,
            "openblas_core": openblas.openblas_get_corename().decode() if openblas else None,
            "train_questions": len(data), "vocab": vocab, "pe": args.pe, "null_slots": args.null_slots}
    print(json.dumps({"meta": meta}), flush=True)
    for threads in [int(t) for t in args.threads.split(",")]:
        torch.set_num_threads(threads)
        if openblas is not None:
            openblas.openblas_set_num_threads(threads)
        rates = [measure(data, vocab, args) for _ in range(args.repeats)]
        print(json.dumps({"name": "memn2n-babi", "batch": args.batch, "threads": threads,
                          "q_per_s": statistics.median(rates), "min": min(rates), "max": max(rates),
                          "repeats": args.repeats, "steps": args.steps}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
