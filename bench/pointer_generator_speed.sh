#!/usr/bin/env bash
# Pointer-generator training and decoding speed, engram vs PyTorch (DESIGN.md "Benchmarking
# fairly"): build/bench/pointer_generator_speed (bench/pointer_generator_speed.cc) and
# bench/pytorch/pointer_generator.py, the same shapes (configs/pointer-generator-bbc-summary.yaml:
# V 10k, E 64, bi-LSTM 2 x 64, LSTM decoder 128, additive attention with the coverage feature,
# the p_gen copy mixture; batch 8, articles of 400 tokens, outputs of 120), interleaved A B A B,
# REPS times each. Training: one fixed batch, forward + backward + clipping + Adam. Decoding:
# greedy, one article at a time. Prints medians with min-max spreads and the speed-ups; each side
# runs with 1 and 2 threads and its better thread count is its number.
#
# Usage: bench/pointer_generator_speed.sh [extra flags for both sides, e.g. --src-len 200 --tgt-len 20 --batch 16]
# Environment (all optional):
#   BUILD=dir       build directory holding bench/pointer_generator_speed (default build)
#   REPS=N          repetitions per side (default 5)
#   THREADS=1,2     thread counts tried on both sides
#   STEPS=N         timed training steps per measurement (default 3)
#   WARMUP=N        untimed training steps first, both sides (default 2: engram's graph arena
#                   settles into one block after step 1, and step 2 first touches its pages)
#   SENTENCES=N     articles decoded per measurement (default 4)
#   OUT=file        Markdown output (default $BUILD/pointer_generator_speed_last.md)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BUILD:-build}
bin=$build/bench/pointer_generator_speed
reps=${REPS:-5}
threads=${THREADS:-1,2}
steps=${STEPS:-3}
warmup=${WARMUP:-2}
sentences=${SENTENCES:-4}
out=${OUT:-$build/pointer_generator_speed_last.md}
python=/usr/bin/python3
libdir=/usr/lib/x86_64-linux-gnu
[ -x "$bin" ] || { echo "pointer_generator_speed.sh: $bin missing (build it, or set BUILD)" >&2; exit 1; }
"$python" -c 'import torch' 2>/dev/null || { echo "pointer_generator_speed.sh: $python cannot import torch" >&2; exit 1; }

base_env=(env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS -u GOTO_NUM_THREADS)
engram_env=("${base_env[@]}" "LD_LIBRARY_PATH=$libdir/openblas-pthread")
. bench/torch_coretype.sh
[ -d "$libdir/openblas-openmp" ] && torch_lib=$libdir/openblas-openmp || torch_lib=$libdir/openblas-pthread
torch_cmd=("${base_env[@]}" -u OPENBLAS_CORETYPE "LD_LIBRARY_PATH=$torch_lib" "${coretype[@]}"
           "$python" bench/pytorch/pointer_generator.py --threads "$threads" --steps "$steps" --warmup "$warmup" --sentences "$sentences" "$@")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
load0=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s)
for rep in $(seq "$reps"); do
  for t in ${threads//,/ }; do
    echo "rep $rep/$reps: engram, $t thread(s)" >&2
    "${engram_env[@]}" "$bin" --threads "$t" --steps "$steps" --warmup "$warmup" --sentences "$sentences" "$@" \
      > "$tmp/engram-$rep-t$t.txt"
  done
  echo "rep $rep/$reps: pytorch" >&2
  "${torch_cmd[@]}" > "$tmp/torch-$rep.jsonl"
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
engram_example="${engram_env[*]} $bin --threads T --steps $steps --warmup $warmup --sentences $sentences $*"

"$python" - "$tmp" "$reps" "$threads" "$load0" "$load1" "$(( $(date +%s) - t0 ))" "$engram_example" \
  "${torch_cmd[*]}" <<'PY' | tee "$out"
import json, re, statistics, sys
tmp, reps, threads, load0, load1, secs, ecmd, tcmd = sys.argv[1], int(sys.argv[2]), sys.argv[3], *sys.argv[4:]
threads = [int(t) for t in threads.split(",")]
eng, tor, meta, header = {}, {}, None, None
for r in range(1, reps + 1):
    for t in threads:
        for line in open(f"{tmp}/engram-{r}-t{t}.txt"):
            m = re.match(r"train: ([\d.]+) ms/step", line)
            if m:
                eng.setdefault(("train", t), []).append(float(m.group(1)))
                continue
            m = re.match(r"greedy batch 1: ([\d.]+) articles/s", line)
            if m:
                eng.setdefault(("greedy batch 1", t), []).append(float(m.group(1)))
            elif header is None:
                header = line.strip()
    for line in open(f"{tmp}/torch-{r}.jsonl"):
        j = json.loads(line)
        if "meta" in j:
            meta = j["meta"]
        else:
            tor.setdefault((j["name"], j["threads"]), []).append(j["value"])
med = statistics.median
def best(d, name, lower):
    cands = [(med(v), min(v), max(v), t) for (n, t), v in d.items() if n == name]
    return (min if lower else max)(cands, key=lambda c: c[0])
def cell(c, fmt="{:.1f}"):
    return f"{fmt.format(c[0])} ({fmt.format(c[1])}–{fmt.format(c[2])}), {c[3]}t"
print("# Pointer-generator speed: engram vs PyTorch\n")
print(f"- engram: {header}")
print(f"- PyTorch {meta['torch']}: {meta['openblas']} (core {meta['openblas_core']}); malloc {meta['malloc']}")
print(f"- {reps} repetitions per side, interleaved; thread counts {threads} on both sides, each side's best shown; "
      f"load average {load0} at start, {load1} at end; {secs} s")
print(f"- engram: `{ecmd}`")
print(f"- PyTorch: `{tcmd}`\n")
print("| workload | engram | PyTorch | speed-up |")
print("|---|---|---|---|")
e, p = best(eng, "train", True), best(tor, "train", True)
print(f"| training step, ms (lower is better) | {cell(e)} | {cell(p)} | **{p[0] / e[0]:.2f}x** |")
e, p = best(eng, "greedy batch 1", False), best(tor, "greedy batch 1", False)
print(f"| greedy decoding one article at a time, articles/s | {cell(e, '{:.2f}')} | {cell(p, '{:.2f}')} | **{e[0] / p[0]:.2f}x** |")
PY
