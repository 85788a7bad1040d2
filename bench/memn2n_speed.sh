#!/usr/bin/env bash
# MemN2N training speed on bAbI 1k (20 tasks jointly), engram vs PyTorch (DESIGN.md "Benchmarking
# fairly"): build/bench/memn2n_speed (bench/memn2n_speed.cc) and bench/pytorch/memn2n.py (the
# training recipe's model: D 50, K 3 hops, adjacent tying, the authors' PE (pe_global), TE with
# random noise, memories padded to 50 slots with the empty ones in the softmax (null slots),
# summed cross-entropy, clip 40, SGD; same data and batches) interleaved A B A B, REPS times each;
# prints medians with min-max spreads and the speed-up as Markdown (stdout and $OUT). PyTorch runs
# with 1 and 2 threads and its better one is the bar; its batches are built before its clock
# starts (engram's inside the timed loop).
#
# Usage: bench/memn2n_speed.sh
# Environment (all optional):
#   BUILD=dir          build directory holding bench/memn2n_speed (default build)
#   DATA=dir           bAbI directory (default ${ENGRAM_DATA_DIR:-../shared/data}/babi/en)
#   REPS=N             repetitions per side (default 5)
#   BATCH=N            batch size (default 32)
#   STEPS=N            timed updates per measurement (default 1000 engram / TORCH_STEPS 200 PyTorch)
#   OUT=file           Markdown output (default $BUILD/memn2n_speed_last.md)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BUILD:-build}
bin=$build/bench/memn2n_speed
data=${DATA:-${ENGRAM_DATA_DIR:-$root/../shared/data}/babi/en}
reps=${REPS:-5}
batch=${BATCH:-32}
steps=${STEPS:-1000}
torch_steps=${TORCH_STEPS:-200}
out=${OUT:-$build/memn2n_speed_last.md}
python=/usr/bin/python3
libdir=/usr/lib/x86_64-linux-gnu
[ -x "$bin" ] || { echo "memn2n_speed.sh: $bin missing (build it, or set BUILD)" >&2; exit 1; }
[ -d "$data" ] || { echo "memn2n_speed.sh: bAbI directory $data missing (set DATA)" >&2; exit 1; }
"$python" -c 'import torch' 2>/dev/null || { echo "memn2n_speed.sh: $python cannot import torch" >&2; exit 1; }

engram_cmd=(env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS "LD_LIBRARY_PATH=$libdir/openblas-pthread"
            "$bin" --data "$data" --batch "$batch" --steps "$steps" --threads 1)
. bench/torch_coretype.sh
torch_cmd=(env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS -u OPENBLAS_CORETYPE "LD_LIBRARY_PATH=$libdir/openblas-openmp"
           "${coretype[@]}" "$python" bench/pytorch/memn2n.py --data "$data" --batch "$batch"
           --threads 1,2 --steps "$torch_steps" --warmup 20)
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
eng, tor, meta, header = [], [], None, None
for r in range(1, reps + 1):
    for line in open(f"{tmp}/engram-{r}.txt"):
        m = re.match(r"engram memn2n train: ([\d.]+) questions/s\s+\((.*)\)", line)
        if m:
            eng.append(float(m.group(1)))
            header = m.group(2)
    best = (0, 0)
    for line in open(f"{tmp}/torch-{r}.jsonl"):
        j = json.loads(line)
        if "meta" in j:
            meta = j["meta"]
        elif j["q_per_s"] > best[0]:
            best = (j["q_per_s"], j["threads"])
    tor.append(best)
def cell(xs):
    return f"{statistics.median(xs):.0f} ({min(xs):.0f}–{max(xs):.0f})"
t = [v for v, _ in tor]
threads = sorted({n for _, n in tor})
print("# MemN2N training speed: engram vs PyTorch (bAbI 1k, 20 tasks jointly)\n")
print(f"- engram: {header}")
print(f"- PyTorch {meta['torch']}: {meta['openblas']} (core {meta['openblas_core']}), best of 1 and 2 threads per run "
      f"(chosen: {threads}); malloc {meta['malloc']}; {meta['train_questions']} training questions, V {meta['vocab']}")
print(f"- {reps} repetitions per side, interleaved; load average {load0} at start, {load1} at end; {secs} s")
print(f"- engram: `{ecmd}`")
print(f"- PyTorch: `{tcmd}`\n")
print("| model | engram questions/s | PyTorch questions/s | speed-up (medians) |")
print("|---|---|---|---|")
print(f"| MemN2N D 50, K 3, batch 32 | {cell(eng)} | {cell(t)} | {statistics.median(eng) / statistics.median(t):.1f}x |")
EOF
