#!/usr/bin/env bash
# Pointer Network training and decoding speed, engram vs PyTorch (DESIGN.md "Benchmarking
# fairly"): build/bench/pointer_speed (bench/pointer_speed.cc) and bench/pytorch/pointer.py, the
# same shapes (2-D points, linear embedding E 128, LSTM encoder and decoder H 256, additive
# pointer, TSP masks; batch 128, n = 10 and 50), interleaved A B A B, REPS times each.
# Training: one fixed batch with random tours as targets, forward + backward + clipping + Adam,
# sequences/s. Decoding: greedy, a batch of 128 instances at once and instances one at a time,
# instances/s. Prints medians with min-max spreads and the speed-ups; each side runs with 1 and
# 2 threads and its better thread count is its number.
#
# Usage: bench/pointer_speed.sh [extra flags for both sides, e.g. --n 20 --batch 64]
# Environment (all optional):
#   BUILD=dir       build directory holding bench/pointer_speed (default build)
#   REPS=N          repetitions per side (default 5)
#   THREADS=1,2     thread counts tried on both sides
#   STEPS=N         timed training steps per measurement (default 3)
#   WARMUP=N        untimed training steps first, both sides (default 2)
#   BATCHES=N       timed decoding batches per measurement (default 2)
#   SINGLES=N       instances decoded one at a time per measurement (default 20)
#   OUT=file        Markdown output (default $BUILD/pointer_speed_last.md)
#   TORCH_FLAGS=... extra flags for the PyTorch side only, e.g. --fold (the embedding folded into
#                   the LSTMs' input weights by hand, as engram does: bench/pytorch/pointer.py)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BUILD:-build}
bin=$build/bench/pointer_speed
reps=${REPS:-5}
threads=${THREADS:-1,2}
steps=${STEPS:-3}
warmup=${WARMUP:-2}
batches=${BATCHES:-2}
singles=${SINGLES:-20}
out=${OUT:-$build/pointer_speed_last.md}
python=/usr/bin/python3
libdir=/usr/lib/x86_64-linux-gnu
[ -x "$bin" ] || { echo "pointer_speed.sh: $bin missing (build it, or set BUILD)" >&2; exit 1; }
"$python" -c 'import torch' 2>/dev/null || { echo "pointer_speed.sh: $python cannot import torch" >&2; exit 1; }

base_env=(env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS -u GOTO_NUM_THREADS)
engram_env=("${base_env[@]}" "LD_LIBRARY_PATH=$libdir/openblas-pthread")
. bench/torch_coretype.sh
[ -d "$libdir/openblas-openmp" ] && torch_lib=$libdir/openblas-openmp || torch_lib=$libdir/openblas-pthread
common=(--steps "$steps" --warmup "$warmup" --decode-batches "$batches" --singles "$singles")
torch_cmd=("${base_env[@]}" -u OPENBLAS_CORETYPE "LD_LIBRARY_PATH=$torch_lib" "${coretype[@]}"
           "$python" bench/pytorch/pointer.py --threads "$threads" "${common[@]}" ${TORCH_FLAGS:-} "$@")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
load0=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s)
for rep in $(seq "$reps"); do
  for t in ${threads//,/ }; do
    echo "rep $rep/$reps: engram, $t thread(s)" >&2
    "${engram_env[@]}" "$bin" --threads "$t" "${common[@]}" "$@" > "$tmp/engram-$rep-t$t.txt"
  done
  echo "rep $rep/$reps: pytorch" >&2
  "${torch_cmd[@]}" > "$tmp/torch-$rep.jsonl"
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
engram_example="${engram_env[*]} $bin --threads T ${common[*]} $*"

"$python" - "$tmp" "$reps" "$threads" "$load0" "$load1" "$(( $(date +%s) - t0 ))" "$engram_example" \
  "${torch_cmd[*]}" <<'PY' | tee "$out"
import json, re, statistics, sys
tmp, reps, threads, load0, load1, secs, ecmd, tcmd = sys.argv[1], int(sys.argv[2]), sys.argv[3], *sys.argv[4:]
threads = [int(t) for t in threads.split(",")]
eng, tor, meta, headers = {}, {}, None, []
pattern = re.compile(r"(train|greedy batch|greedy single) n (\d+): ([\d.]+) (?:sequences|instances)/s, cpu ([\d.]+) ms")
def add(d, key, wall, cpu):
    d.setdefault(key, ([], []))
    d[key][0].append(wall)
    d[key][1].append(cpu)
for r in range(1, reps + 1):
    for t in threads:
        for line in open(f"{tmp}/engram-{r}-t{t}.txt"):
            m = pattern.match(line)
            if m:
                add(eng, (m.group(1), int(m.group(2)), f"{t}t"), float(m.group(3)), float(m.group(4)))
            elif r == 1 and t == threads[0] and line.startswith("pointer n "):
                headers.append(line.strip())
    for line in open(f"{tmp}/torch-{r}.jsonl"):
        j = json.loads(line)
        if "meta" in j:
            meta = j["meta"]
        else:
            how = f"{j['threads']}t" + (f" {j['mode']}" if "mode" in j else "")
            add(tor, (j["name"], j["n"], how), j["value"], j["cpu_ms"])
med = statistics.median
def best(d, name, n):
    """(median, min, max, how) of the configuration with the highest median rate, and the lowest
    median processor time per unit over the configurations."""
    cands = [(med(w), min(w), max(w), how) for (k, m, how), (w, c) in d.items() if k == name and m == n]
    cpus = [(med(c), how) for (k, m, how), (w, c) in d.items() if k == name and m == n]
    return (max(cands, key=lambda c: c[0]), min(cpus)) if cands else (None, None)
def cell(c):
    return f"{c[0]:.1f} ({c[1]:.1f}–{c[2]:.1f}), {c[3]}"
print("# Pointer Network speed: engram vs PyTorch\n")
for h in headers:
    print(f"- engram: {h}")
print(f"- PyTorch {meta['torch']}: {meta['openblas']} (core {meta['openblas_core']}); malloc {meta['malloc']}; "
      f"training pointer forms {meta['pointer']}; embedding folded into the LSTMs by hand: {meta.get('fold', False)}")
print(f"- {reps} repetitions per side, interleaved; thread counts {threads} on both sides, each side's best shown; "
      f"load average {load0} at start, {load1} at end; {secs} s")
print(f"- engram: `{ecmd}`")
print(f"- PyTorch: `{tcmd}`\n")
print("Rates: median (min–max) over the repetitions, of each side's best thread count (PyTorch: and training "
      "pointer form). Processor time: the median ms of CPU per sequence / instance (all threads), of each side's "
      "most frugal configuration; a check that does not depend on how busy the shared machine was.\n")
print("| workload | n | engram | PyTorch | speed-up | CPU ms engram / PyTorch | CPU ratio |")
print("|---|---|---|---|---|---|---|")
labels = {"train": "training, sequences/s", "greedy batch": "greedy decoding, batch of B, instances/s",
          "greedy single": "greedy decoding one instance at a time, instances/s"}
ns = sorted({m for (_, m, _) in eng})
for name in ("train", "greedy batch", "greedy single"):
    for n in ns:
        (e, ec), (p, pc) = best(eng, name, n), best(tor, name, n)
        if e and p:
            print(f"| {labels[name]} | {n} | {cell(e)} | {cell(p)} | **{e[0] / p[0]:.2f}x** | "
                  f"{ec[0]:.3f} ({ec[1]}) / {pc[0]:.3f} ({pc[1]}) | {pc[0] / ec[0]:.2f}x |")
PY
