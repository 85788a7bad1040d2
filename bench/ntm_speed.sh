#!/usr/bin/env bash
# NTM training speed, engram vs PyTorch, on the copy task (DESIGN.md "Benchmarking fairly"):
# build/bench/ntm_speed (bench/ntm_speed.cc) and bench/pytorch/ntm.py (the same model, maths,
# data schedule and update) interleaved A B A B, REPS times each; prints medians with min-max
# spreads and the speed-up as Markdown (stdout and $OUT). PyTorch runs with 1 and 2 threads and
# its better one is the bar.
#
# Usage: bench/ntm_speed.sh
# Environment (all optional):
#   BUILD=dir          build directory holding bench/ntm_speed (default build)
#   REPS=N             repetitions per side (default 5)
#   BATCHES=1,16       batch sizes
#   STEPS=N            timed updates per measurement (default 100 engram / TORCH_STEPS 40 PyTorch;
#                      multiples of 20 so every length 1..20 is done equally often)
#   TORCH_THREADS=1,2  PyTorch thread counts (its best is the bar; on a loaded machine 2 OpenMP
#                      threads spin-wait and only slow it down, so 1 may be all that is worth timing)
#   OUT=file           Markdown output (default $BUILD/ntm_speed_last.md)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BUILD:-build}
bin=$build/bench/ntm_speed
reps=${REPS:-5}
batches=${BATCHES:-1,16}
steps=${STEPS:-100}
torch_steps=${TORCH_STEPS:-40}
torch_threads=${TORCH_THREADS:-1,2}
out=${OUT:-$build/ntm_speed_last.md}
python=/usr/bin/python3
libdir=/usr/lib/x86_64-linux-gnu
[ -x "$bin" ] || { echo "ntm_speed.sh: $bin missing (build it, or set BUILD)" >&2; exit 1; }
"$python" -c 'import torch' 2>/dev/null || { echo "ntm_speed.sh: $python cannot import torch" >&2; exit 1; }

. bench/torch_coretype.sh
engram_cmd=(env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS "LD_LIBRARY_PATH=$libdir/openblas-pthread"
            "$bin" --batch "$batches" --steps "$steps" --warmup 20 --threads 1)
torch_cmd=(env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS -u OPENBLAS_CORETYPE "LD_LIBRARY_PATH=$libdir/openblas-openmp"
           "${coretype[@]}" "$python" bench/pytorch/ntm.py --batch "$batches" --threads "$torch_threads"
           --steps "$torch_steps" --warmup 5)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
load0=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s)
for rep in $(seq "$reps"); do
  echo "rep $rep/$reps: engram" >&2
  "${engram_cmd[@]}" > "$tmp/engram-$rep.txt"
  echo "rep $rep/$reps: pytorch" >&2
  "${torch_cmd[@]}" > "$tmp/torch-$rep.jsonl"
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

"$python" - "$tmp" "$reps" "$load0" "$load1" "$(( $(date +%s) - t0 ))" "${engram_cmd[*]}" "${torch_cmd[*]}" <<'EOF' | tee "$out"
import json, re, statistics, sys
tmp, reps, load0, load1, secs, ecmd, tcmd = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
eng, tor, meta, header = {}, {}, None, None
for r in range(1, reps + 1):
    for line in open(f"{tmp}/engram-{r}.txt"):
        m = re.match(r"batch (\d+): ([\d.]+) sequences/s", line)
        if m:
            eng.setdefault(int(m.group(1)), []).append(float(m.group(2)))
        elif header is None:
            header = line.strip()
    best = {}
    for line in open(f"{tmp}/torch-{r}.jsonl"):
        j = json.loads(line)
        if "meta" in j:
            meta = j["meta"]
            continue
        if j["seq_per_s"] > best.get(j["batch"], (0, 0))[0]:
            best[j["batch"]] = (j["seq_per_s"], j["threads"])
    for b, v in best.items():
        tor.setdefault(b, []).append(v)
def cell(xs):
    return f"{statistics.median(xs):.1f} ({min(xs):.1f}–{max(xs):.1f})"
print("# NTM training speed: engram vs PyTorch (copy task)\n")
print(f"- engram: {header}")
print(f"- PyTorch {meta['torch']}: {meta['openblas']} (core {meta['openblas_core']}), best thread count per run; "
      f"malloc {meta['malloc']}")
print(f"- {reps} repetitions per side, interleaved; load average {load0} at start, {load1} at end; {secs} s")
print(f"- engram: `{ecmd}`")
print(f"- PyTorch: `{tcmd}`\n")
print("| batch | engram seq/s | PyTorch seq/s (threads) | speed-up |")
print("|---|---|---|---|")
for b in sorted(eng):
    t = [v for v, _ in tor.get(b, [])]
    th = sorted({n for _, n in tor.get(b, [])})
    speed = statistics.median(eng[b]) / statistics.median(t) if t else float("nan")
    print(f"| {b} | {cell(eng[b])} | {cell(t) if t else '—'} ({','.join(map(str, th))}) | {speed:.1f}x |")
EOF
