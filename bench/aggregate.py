#!/usr/bin/python3
"""Summarises one bench/run.sh run: the engram side (Google Benchmark JSON per program and
repetition) against the PyTorch side (bench/pytorch/bench_torch.py JSON lines per repetition).

  aggregate.py RUN_DIR   reads RUN_DIR/rep*/engram_*.json, RUN_DIR/rep*/torch.jsonl,
                         RUN_DIR/header.md (date, machine, commands) and prints Markdown.

Every sample is seconds per item (op, GEMM call, time step). For each side, workload, variant
and thread count: median over repetitions and the min-max spread. A side's number for a workload
is its best (lowest median) variant and thread count; engram's sgemm rows use kernels::sgemm
("dispatch", the one the library calls). speed-up = pytorch / engram (> 1: engram is faster).
FLOPs (GEMM work only, forward + backward = 3x forward): sgemm 2MNK; RNN step 3 * 2B(I+H)G with
I = H and G = 3H (GRU) or 4H (LSTM); additive attention step 3 * 2B(HA + SA + SH) + the key
projection 3 * 2BSHA / T (A = H); dot attention 3 * 2B(SH + SH). % of peak is against the best
sgemm median of this run (any shape, either side) at the same thread count.
"""
import glob
import json
import os
import re
import statistics
import sys
from collections import defaultdict


def parse_params(workload):
    """'rnn:gru,B=16,H=128,T=20' -> ('rnn', ['gru'], {'B': 16, 'H': 128, 'T': 20})"""
    family, _, rest = workload.partition(":")
    words, params = [], {}
    for part in rest.split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            params[k] = int(v) if v.isdigit() else v
        elif part:
            words.append(part)
    return family, words, params


def flops_per_item(workload):
    family, words, p = parse_params(workload)
    if family == "sgemm":
        return 2.0 * p["M"] * p["N"] * p["K"]
    if family == "rnn":
        g = (3 if "gru" in words else 4) * p["H"]
        return 3 * 2.0 * p["B"] * (p["H"] + p["H"]) * g
    if family == "attention":
        b, s, h, t = p["B"], p["S"], p["H"], p["T"]
        if "additive" in words:
            return 3 * 2.0 * b * (h * h + s * h + s * h) + 3 * 2.0 * b * s * h * h / t
        return 3 * 2.0 * b * (s * h + s * h)
    return None


def item_name(workload):
    family, _, p = parse_params(workload)
    if family == "graph":
        return "op"
    if family == "sgemm":
        return "call"
    if family == "attention" and p.get("T") == 1:
        return "read"
    return "step"


def fmt_time(sec, item):
    if sec < 1e-6:
        return f"{sec * 1e9:.0f} ns/{item}"
    if sec < 1e-3:
        return f"{sec * 1e6:.1f} µs/{item}"
    return f"{sec * 1e3:.2f} ms/{item}"


def fmt_spread(stats, item):
    med, lo, hi = stats
    unit_scale = 1e9 if med < 1e-6 else 1e6 if med < 1e-3 else 1e3
    return f"{fmt_time(med, item)} ({lo * unit_scale:.3g}–{hi * unit_scale:.3g})"


def load(run_dir):
    """samples[(side, workload, variant, threads)] = [sec_per_item per repetition]; metas."""
    samples = defaultdict(list)
    contexts, metas = {}, []
    order = {}  # workload -> first position seen (PyTorch's list first: it is in a designed order)
    for rep_dir in sorted(glob.glob(os.path.join(run_dir, "rep*"))):
        for path in sorted(glob.glob(os.path.join(rep_dir, "engram_*.json"))):
            if os.path.getsize(path) == 0:  # the filter left that program nothing to run
                continue
            try:
                with open(path) as f:
                    data = json.load(f)
            except (OSError, json.JSONDecodeError) as e:
                print(f"<!-- skipped {path}: {e} -->")
                continue
            contexts[os.path.basename(path)] = data.get("context", {})
            for bm in data.get("benchmarks", []):
                if bm.get("run_type") != "iteration" or "sec_per_item" not in bm:
                    continue
                parts = bm["name"].split("/")
                workload, variant, threads = parts[0], parts[1], int(parts[2].lstrip("t"))
                samples[("engram", workload, variant, threads)].append(bm["sec_per_item"])
        tpath = os.path.join(rep_dir, "torch.jsonl")
        if os.path.exists(tpath):
            with open(tpath) as f:
                for line in f:
                    line = line.strip()
                    if not line.startswith("{"):
                        continue
                    d = json.loads(line)
                    if "meta" in d:
                        metas.append(d["meta"])
                        continue
                    samples[("pytorch", d["name"], d["variant"], d["threads"])].append(d["median"])
                    order.setdefault(d["name"], len(order))
    for (_, w, _, _) in list(samples):
        order.setdefault(w, len(order))
    return samples, contexts, metas, order


def stats_of(values):
    return statistics.median(values), min(values), max(values)


def best(samples, side, workload, variant_ok=lambda v: True):
    """(median, min, max, variant, threads) of the lowest median, or None."""
    cands = [(stats_of(v), var, t) for (s, w, var, t), v in samples.items()
             if s == side and w == workload and variant_ok(var) and v]
    if not cands:
        return None
    (med, lo, hi), var, t = min(cands, key=lambda c: c[0][0])
    return med, lo, hi, var, t


def family_order(w):
    order = {"sgemm": 0, "graph": 1, "rnn": 2, "attention": 3}
    return order.get(w.split(":")[0], 9)


def main():
    run_dir = sys.argv[1]
    samples, contexts, metas, order = load(run_dir)
    out = []
    header = os.path.join(run_dir, "header.md")
    if os.path.exists(header):
        with open(header) as f:
            out.append(f.read().rstrip() + "\n")

    # sgemm peak per thread count: best sgemm median of the run, any shape, either side, any backend.
    peak = {}
    for (side, w, var, t), v in samples.items():
        if w.startswith("sgemm:") and v:
            g = flops_per_item(w) / statistics.median(v) / 1e9
            peak[t] = max(peak.get(t, 0.0), g)

    workloads = sorted({w for (_, w, _, _) in samples}, key=lambda w: (family_order(w), order[w]))
    n_reps = max((len(v) for v in samples.values()), default=0)
    out.append(f"## engram vs PyTorch ({n_reps} repetitions per side, interleaved)\n")
    out.append("Each cell: median over repetitions (min–max). Best variant / thread count of each side "
               "in brackets. Speed-up = PyTorch time / engram time (> 1: engram faster).\n")
    out.append("| workload | engram | pytorch (best of 1/2 threads) | speed-up engram/pytorch | "
               "GFLOP/s (% of sgemm peak) engram / pytorch |")
    out.append("|---|---|---|---|---|")
    for w in workloads:
        item = item_name(w)
        e = best(samples, "engram", w, (lambda v: v == "dispatch") if w.startswith("sgemm") else (lambda v: True))
        p = best(samples, "pytorch", w)
        e_cell = f"{fmt_spread(e[:3], item)} [{e[3]}, t{e[4]}]" if e else "—"
        p_cell = f"{fmt_spread(p[:3], item)} [{p[3]}, t{p[4]}]" if p else "—"
        ratio = f"{p[0] / e[0]:.2f}x" if e and p else "—"
        fl = flops_per_item(w)
        flop_bound = fl is not None and not ("dot" in w)
        gcell = "—"
        if flop_bound:
            cells = []
            for r in (e, p):
                if r is None:
                    cells.append("—")
                    continue
                g = fl / r[0] / 1e9
                pk = peak.get(r[4])
                cells.append(f"{g:.0f} ({100 * g / pk:.0f}%)" if pk else f"{g:.0f}")
            gcell = " / ".join(cells)
        out.append(f"| {w} | {e_cell} | {p_cell} | {ratio} | {gcell} |")
    if peak:
        out.append("\nsgemm peak used for %: " + ", ".join(f"t{t} {g:.0f} GFLOP/s" for t, g in sorted(peak.items()))
                   + " (best sgemm median of this run at that thread count, any shape, side or backend).\n")

    # Backend survey: GFLOP/s of every sgemm variant at every shape and thread count.
    shapes = [w for w in workloads if w.startswith("sgemm:")]
    cols = sorted({(s, var, t) for (s, w, var, t) in samples if w.startswith("sgemm:")},
                  key=lambda c: (c[0] != "engram", ["openblas", "dnnl", "eigen", "eigen_omp", "dispatch"].index(c[1])
                                 if c[1] in ["openblas", "dnnl", "eigen", "eigen_omp", "dispatch"] else 9, c[2]))
    if shapes:
        out.append("## sgemm backends (GFLOP/s, median over repetitions; M×K×N, xWt = x·Wᵀ with W [N, K])\n")
        out.append("| shape | " + " | ".join(f"{var} t{t}" for (_, var, t) in cols)
               + " | fastest engram backend t1 | t2 |")
        out.append("|---|" + "---|" * (len(cols) + 2))
        for w in shapes:
            row, by_t = [], defaultdict(list)
            for c in cols:
                v = samples.get((c[0], w, c[1], c[2]))
                if v:
                    g = flops_per_item(w) / statistics.median(v) / 1e9
                    row.append(f"{g:.0f}")
                    if c[0] == "engram" and c[1] != "dispatch":
                        by_t[c[2]].append((g, c[1]))
                else:
                    row.append("—")
            fastest = [max(by_t[t])[1] if by_t[t] else "—" for t in (1, 2)]
            out.append(f"| {w.split(':', 1)[1]} | " + " | ".join(row) + f" | {fastest[0]} | {fastest[1]} |")
        out.append("")

    # What each side loaded.
    out.append("## Libraries and kernels loaded\n")
    seen = set()
    for name, ctx in sorted(contexts.items()):
        key = (ctx.get("loaded_libraries"), ctx.get("openblas_config"), ctx.get("OPENBLAS_CORETYPE"))
        if ctx.get("engram_blas_backend") is None or key in seen:
            continue
        seen.add(key)
        out.append(f"- engram ({name.split('_', 1)[1].rsplit('.', 1)[0]}...): kernels::sgemm → "
                   f"`{ctx.get('engram_blas_backend')}`; OpenBLAS `{ctx.get('openblas_config')}` "
                   f"(OPENBLAS_CORETYPE={ctx.get('OPENBLAS_CORETYPE')}); {ctx.get('dnnl', '')}; "
                   f"loaded: `{ctx.get('loaded_libraries')}`")
    if metas:
        m = metas[0]
        out.append(f"- pytorch {m.get('torch')} ({m.get('python')}): BLAS_INFO={m.get('blas_info')}, "
                   f"OpenBLAS `{m.get('openblas_config')}`, ATen CPU capability {m.get('cpu_capability')}, "
                   f"mkldnn={m.get('mkldnn')}, malloc {m.get('malloc')}, env {m.get('env')}; "
                   f"loaded: `{' '.join(m.get('loaded_libraries', []))}`")
    out.append("")

    # Every sample, for RESULTS.md.
    out.append("<details><summary>All results (median, min–max over repetitions)</summary>\n")
    out.append("| side | workload | variant | threads | median | min–max | n |")
    out.append("|---|---|---|---|---|---|---|")
    for key in sorted(samples, key=lambda k: (family_order(k[1]), order[k[1]], k[0], k[2], k[3])):
        side, w, var, t = key
        med, lo, hi = stats_of(samples[key])
        out.append(f"| {side} | {w} | {var} | {t} | {fmt_time(med, item_name(w))} | "
                   f"{fmt_time(lo, item_name(w))} – {fmt_time(hi, item_name(w))} | {len(samples[key])} |")
    out.append("\n</details>\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
