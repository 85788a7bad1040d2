#!/usr/bin/env bash
# Training step in fp32 and in bf16 mixed precision (train.precision), engram's own, side by side:
# build/bench/seq2seq_speed --what train (bench/seq2seq_speed.cc: the Updater's forward +
# backward + clipping + Adam on one batch of the bench shape, bi-GRU 2x512, GRU 512, additive
# attention, E 256, V 8k, B 64, S = T = 20), interleaved fp32 / bf16 REPS times, and the peak of
# each precision's large product (build/bench/blas_bench at 2048^3: kernels::sgemm and
# kernels::sgemm_bf16) measured in the same run. Prints medians with min-max spreads, the
# speed-up and each step's GFLOP/s against the peak of its precision.
#
# Usage: bench/train_precision.sh
# Environment (all optional):
#   BUILD=dir    build directory (default build)
#   REPS=N       repetitions per precision (default 5)
#   THREADS=N    threads (default 1)
#   STEPS=N      timed training steps per measurement (default 5)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BUILD:-build}
reps=${REPS:-5}
threads=${THREADS:-1}
steps=${STEPS:-5}
bin=$build/bench/seq2seq_speed
[ -x "$bin" ] || { echo "train_precision.sh: $bin missing (build it, or set BUILD)" >&2; exit 1; }
[ -x "$build/bench/blas_bench" ] || { echo "train_precision.sh: $build/bench/blas_bench missing" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
load0=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s)
for rep in $(seq "$reps"); do
  for p in fp32 bf16; do
    echo "rep $rep/$reps: $p" >&2
    "$bin" --what train --threads "$threads" --steps "$steps" --train-precision "$p" > "$tmp/$p-$rep.txt"
  done
  echo "rep $rep/$reps: peaks" >&2
  "$build/bench/blas_bench" --benchmark_filter="M=2048.*/(dispatch|bf16_train)/t$threads/" \
    --benchmark_min_time=0.5 --benchmark_format=json > "$tmp/peak-$rep.json" 2>/dev/null
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)

/usr/bin/python3 - "$tmp" "$reps" "$threads" "$steps" "$load0" "$load1" "$(( $(date +%s) - t0 ))" "$cpu" \
  "$(git rev-parse --short HEAD)" <<'EOF'
import json, re, statistics, sys
tmp, reps, threads, steps, load0, load1, secs, cpu, commit = sys.argv[1:]
reps = int(reps)
ms, peak, gflop = {"fp32": [], "bf16": []}, {"fp32": [], "bf16": []}, None
for r in range(1, reps + 1):
    for p in ms:
        for line in open(f"{tmp}/{p}-{r}.txt"):
            m = re.match(r"train: ([\d.]+) ms/step.* ([\d.]+) GFLOP/step", line)
            if m:
                ms[p].append(float(m.group(1)))
                gflop = float(m.group(2))
    for b in json.load(open(f"{tmp}/peak-{r}.json"))["benchmarks"]:
        peak["bf16" if "bf16_train" in b["name"] else "fp32"].append(b["GFLOP"])
med = statistics.median
print(f"- CPU: {cpu}; {threads} thread(s); engram {commit}; {reps} runs per precision, interleaved; "
      f"load average {load0} at start, {load1} at end; {secs} s")
print(f"- command: `bench/train_precision.sh` (REPS={reps} THREADS={threads} STEPS={steps}); "
      f"one step = {gflop:.2f} GFLOP of products\n")
print("| train.precision | ms/step, median (min–max) | speed-up | GFLOP/s | peak of the precision's product (2048³) | share of the peak |")
print("|---|---|---:|---:|---:|---:|")
for p in ms:
    m = med(ms[p])
    g = gflop / m * 1e3
    print(f"| {p} | {m:.1f} ({min(ms[p]):.1f}–{max(ms[p]):.1f}) | {med(ms['fp32']) / m:.2f}x | {g:.1f} | "
          f"{med(peak[p]):.1f} | {100 * g / med(peak[p]):.0f}% |")
EOF
