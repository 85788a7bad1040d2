#!/usr/bin/python3
"""The PyTorch side of engram's benchmarks: the same workloads as bench/*_bench.cc, same names.

Prints one JSON object per line:
  {"meta": {...}}                              torch version, BLAS loaded, kernels, malloc tuning
  {"name": W, "variant": V, "threads": n, "median": x, "min": x, "max": x, "units": "s/item",
   "repeats": r, "inner": k}                  one line per workload x variant x thread count
Times are seconds per item of the workload: per op (graph:*), per call (sgemm:*), per time step
(rnn:*, attention:* with T=20; T=1 is one prepare + one step). median/min/max are over `repeats`
timed batches of `inner` iterations each, after warm-up.

Run it as bench/run.sh does: /usr/bin/python3 with OPENBLAS_CORETYPE=SkylakeX (PyTorch gets its
best kernels, DESIGN.md "Benchmarking fairly"); glibc malloc is tuned below before torch loads.
Dims: B batch, S source len, H hidden, T time steps, M/K/N GEMM rows/inner/columns.
"""
import argparse
import json
import math
import os
import re
import statistics
import sys
import time

from torch_env import MALLOC, loaded_libraries, openblas_handle  # noqa: E402  (tunes malloc before torch loads)

import torch  # noqa: E402  (after mallopt, so torch's own allocations see the tuning)
import torch.nn as nn  # noqa: E402


def set_threads(n, openblas):
    torch.set_num_threads(n)  # OpenMP threads: ATen, oneDNN and an OpenMP OpenBLAS
    if openblas is not None:
        openblas.openblas_set_num_threads(n)  # a pthread OpenBLAS has its own pool


# ---- workloads: each maker returns (run, items_per_run); run() does one iteration.

def sgemm(m, k, n, xwt):
    def make():
        a = torch.rand(m, k) * 2 - 1
        b = (torch.rand(n, k) * 2 - 1) if xwt else (torch.rand(k, n) * 2 - 1)
        bb = b.t() if xwt else b  # x Wᵀ through a transposed view, as F.linear does
        c = torch.empty(m, n)

        def run():
            torch.mm(a, bb, out=c)
        return run, 1
    return make


GRAPH_INNER = 1000  # ops per run() of the single-op workloads (Python loop included: it is PyTorch's cost)


def graph_binary(numel, op, grad):
    def make():
        a = torch.full((numel,), 0.5, requires_grad=grad)
        b = torch.full((numel,), 0.25, requires_grad=grad)

        def run():
            for _ in range(GRAPH_INNER):
                y = op(a, b)
            return y

        if grad:
            return run, GRAPH_INNER

        def run_nograd():
            with torch.no_grad():
                return run()
        return run_nograd, GRAPH_INNER
    return make


CHAIN_OPS = 50


def graph_chain():
    x = torch.full((4,), 0.5, requires_grad=True)
    w = torch.full((4,), 0.25, requires_grad=True)

    def run():
        x.grad = None
        w.grad = None
        y = x
        for i in range(CHAIN_OPS):
            r = i % 3
            if r == 0:
                y = y + w
            elif r == 1:
                y = y * w
            else:
                y = torch.tanh(y)
        y.sum().backward()
    return run, CHAIN_OPS


RNN_T = 20


def rnn(kind, batch, hidden, variant):
    """variant 'layer': torch.nn.GRU / LSTM over T steps (input projection of the whole sequence
    inside); 'step': a loop over torch.nn.GRUCell / LSTMCell (input projection per step)."""
    def make():
        torch.manual_seed(1)
        x = (torch.rand(RNN_T, batch, hidden) * 2 - 1).requires_grad_(True)  # [T, B, I]
        if variant == "layer":
            mod = (nn.GRU if kind == "gru" else nn.LSTM)(hidden, hidden)

            def forward():
                _, hn = mod(x)
                return hn if kind == "gru" else hn[0]  # final h [1, B, H]
        else:
            mod = (nn.GRUCell if kind == "gru" else nn.LSTMCell)(hidden, hidden)

            def forward():
                h = torch.zeros(batch, hidden)
                c = torch.zeros(batch, hidden)
                for t in range(RNN_T):
                    if kind == "gru":
                        h = mod(x[t], h)
                    else:
                        h, c = mod(x[t], (h, c))
                return h
        params = list(mod.parameters())

        def run():
            for p in params:
                p.grad = None
            x.grad = None
            forward().sum().backward()
        return run, RNN_T
    return make


ATT_B, ATT_S, ATT_H = 64, 20, 512


def attention(score, steps):
    """prepare (batch-major copy of the time-major memory, key projection) once, then `steps`
    reads written the standard way (Bahdanau: vᵀ tanh(W_q q + W_k h_i); dot: q·h_i), softmax,
    context by bmm; loss = Σ_t sum(context_t)."""
    def make():
        torch.manual_seed(1)
        b, s, h = ATT_B, ATT_S, ATT_H
        memory = (torch.rand(s, b, h) * 2 - 1).requires_grad_(True)  # [S, B, H]
        queries = [(torch.rand(b, h) * 2 - 1).requires_grad_(True) for _ in range(steps)]  # [B, H]
        w_q = nn.Linear(h, h, bias=False)
        w_k = nn.Linear(h, h, bias=False)
        v = nn.Linear(h, 1, bias=False)
        params = [w_q.weight, w_k.weight, v.weight]

        def run():
            for p in params + queries + [memory]:
                p.grad = None
            values = memory.transpose(0, 1).contiguous()  # [B, S, H]
            keys = w_k(values) if score == "additive" else values  # [B, S, A]
            loss = None
            for q in queries:
                if score == "additive":
                    e = v(torch.tanh(keys + w_q(q).unsqueeze(1))).squeeze(2)  # [B, S]
                else:
                    e = torch.bmm(keys, q.unsqueeze(2)).squeeze(2)  # [B, S]
                alpha = torch.softmax(e, dim=1)  # [B, S]
                ctx = torch.bmm(alpha.unsqueeze(1), values).squeeze(1)  # [B, H]
                loss = ctx.sum() if loss is None else loss + ctx.sum()
            loss.backward()
        return run, steps
    return make


def workloads():
    """(name, variant, maker) in the order they run; names match the C++ benchmarks."""
    out = []
    for (m, k, n, xwt) in ((512, 512, 512, False), (2048, 2048, 2048, False),
                           (64, 512, 1536, True), (16, 128, 384, True)):
        name = f"sgemm:M={m},K={k},N={n}" + (",xWt" if xwt else "")
        out.append((name, "torch.mm", sgemm(m, k, n, xwt)))
    out.append(("graph:add,n=1", "torch", graph_binary(1, torch.add, True)))
    out.append(("graph:add,n=4", "torch", graph_binary(4, torch.add, True)))
    out.append(("graph:tanh,n=4", "torch", graph_binary(4, lambda a, b: torch.tanh(a), True)))
    out.append(("graph:add,n=4,nograd", "torch", graph_binary(4, torch.add, False)))
    out.append((f"graph:chain{CHAIN_OPS},n=4,fwd_bwd", "torch", graph_chain))
    for kind in ("gru", "lstm"):
        for (b, h) in ((16, 128), (64, 512)):
            for variant, label in (("layer", f"nn.{kind.upper()}"),
                                   ("step", f"nn.{'GRU' if kind == 'gru' else 'LSTM'}Cell")):
                out.append((f"rnn:{kind},B={b},H={h},T={RNN_T}", label, rnn(kind, b, h, variant)))
    for score in ("additive", "dot"):
        for steps in (1, 20):
            out.append((f"attention:{score},B={ATT_B},S={ATT_S},H={ATT_H},T={steps}", "torch",
                        attention(score, steps)))
    return out


def measure(run, items, repeats, min_time):
    t0 = time.perf_counter()
    run()  # warm-up (allocator, thread pools, BLAS buffers), timed to size the batches
    once = max(time.perf_counter() - t0, 1e-9)
    inner = max(1, math.ceil(min_time / once))
    per_item = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            run()
        per_item.append((time.perf_counter() - t0) / (inner * items))
    return per_item, inner


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--filter", default="", help="regex on workload names")
    ap.add_argument("--repeats", type=int, default=5, help="timed batches per workload")
    ap.add_argument("--min-time", type=float, default=0.1, help="seconds per timed batch")
    ap.add_argument("--list", action="store_true", help="print the workload names and exit")
    args = ap.parse_args()

    todo = [w for w in workloads() if re.search(args.filter, w[0])]
    if args.list:
        for name, variant, _ in todo:
            print(name, variant)
        return
    torch.mm(torch.ones(8, 8), torch.ones(8, 8))  # make sure the BLAS is loaded before looking
    ob = openblas_handle()
    cfg = torch.__config__.show()
    meta = {
        "torch": torch.__version__,
        "python": sys.executable,
        "blas_info": (re.search(r"BLAS_INFO=([^,]*)", cfg) or [None, "?"])[1],
        "cpu_capability": (re.search(r"CPU capability usage: (\S+)", cfg) or [None, "?"])[1],
        "mkldnn": torch.backends.mkldnn.is_available(),
        "openblas_config": ob.openblas_get_config().decode() if ob else None,
        "openblas_corename": ob.openblas_get_corename().decode() if ob else None,
        "loaded_libraries": loaded_libraries(),
        "malloc": MALLOC,
        "env": {k: os.environ.get(k) for k in ("OPENBLAS_CORETYPE", "ATEN_CPU_CAPABILITY",
                                                "OMP_NUM_THREADS", "LD_LIBRARY_PATH", "LD_PRELOAD")},
    }
    print(json.dumps({"meta": meta}), flush=True)
    torch.set_grad_enabled(True)
    for n in [int(t) for t in args.threads.split(",") if t]:
        set_threads(n, ob)
        for name, variant, maker in todo:
            run, items = maker()
            per_item, inner = measure(run, items, args.repeats, args.min_time)
            print(json.dumps({"name": name, "variant": variant, "threads": n,
                              "median": statistics.median(per_item), "min": min(per_item),
                              "max": max(per_item), "units": "s/item", "repeats": args.repeats,
                              "inner": inner}), flush=True)


if __name__ == "__main__":
    main()
