#!/usr/bin/env bash
# Tree-LSTM training speed, engram vs PyTorch (DESIGN.md "Benchmarking fairly"): the binary
# constituency Tree-LSTM of the SST recipe (embedding 300, hidden 150, 5 classes, batches of 25,
# AdaGrad 0.05 with the embeddings at 0.1, L2 1e-4 in the loss, dropout 0.5) trained on the same
# generated trees, random binary trees of LEAVES leaves written once by bench/pytorch/tree_lstm.py
# --generate and read by both sides: build/bench/tree_speed (bench/tree_speed.cc: engram's
# node-by-node and level-batched executions) and bench/pytorch/tree_lstm.py (per tree, node by
# node, and level-batched), each with 1 and 2 threads, its better one the bar, interleaved A B A B
# REPS times. Then seconds per SST training epoch on one thread at batch 100, hidden 150, for
# DyNet's published 18.5 s/epoch (Neubig et al. 2017; another machine). Prints medians with
# min-max spreads and the ratios as Markdown (stdout and $OUT).
#
# Usage: bench/tree_speed.sh
# Environment (all optional):
#   BUILD=dir      build directory holding bench/tree_speed (default build)
#   TREES=N        generated training trees (default 1000)
#   LEAVES=N       leaves per generated tree (default 20)
#   REPS=N         repetitions per side (default 3)
#   TORCH_BATCHES=N  timed PyTorch updates per measurement, per tree (default 8; level: 4x that)
#   SST=0          skip the SST epoch
#   OUT=file       Markdown output (default $BUILD/tree_speed_last.md)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BUILD:-build}
bin=$build/bench/tree_speed
trees=${TREES:-1000}
leaves=${LEAVES:-20}
reps=${REPS:-3}
torch_batches=${TORCH_BATCHES:-8}
out=${OUT:-$build/tree_speed_last.md}
python=/usr/bin/python3
libdir=/usr/lib/x86_64-linux-gnu
[ -x "$bin" ] || { echo "tree_speed.sh: $bin missing (build the tree_speed target, or set BUILD)" >&2; exit 1; }
"$python" -c 'import torch' 2>/dev/null || { echo "tree_speed.sh: $python cannot import torch" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd bench/pytorch && "$python" tree_lstm.py --generate "$tmp/trees" --trees "$trees" --leaves "$leaves")

. bench/torch_coretype.sh
engram_cmd=(env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS "LD_LIBRARY_PATH=$libdir/openblas-pthread"
            "$bin" --set "data.dir=$tmp/trees" --execution node,level --warmup 2)
torch_cmd=(env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS -u OPENBLAS_CORETYPE "LD_LIBRARY_PATH=$libdir/openblas-openmp"
           "${coretype[@]}" "$python" bench/pytorch/tree_lstm.py --data "$tmp/trees/train.txt"
           --threads 1,2 --warmup 2)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s)
for rep in $(seq "$reps"); do
  for threads in 1 2; do
    echo "rep $rep/$reps: engram, $threads thread(s)" >&2
    "${engram_cmd[@]}" --threads "$threads" > "$tmp/engram-$rep-$threads.txt"
  done
  echo "rep $rep/$reps: pytorch" >&2
  "${torch_cmd[@]}" --exec pertree --batches "$torch_batches" > "$tmp/torch-$rep.jsonl"
  "${torch_cmd[@]}" --exec level --batches $((4 * torch_batches)) | grep -v '"meta"' >> "$tmp/torch-$rep.jsonl"
done
sst_cmd=(env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS "LD_LIBRARY_PATH=$libdir/openblas-pthread"
         "$bin" --set data.batch_size=100 --execution level,node --threads 1)
if [ "${SST:-1}" != 0 ]; then
  echo "SST epoch, batch 100, one thread" >&2
  "${sst_cmd[@]}" > "$tmp/sst.txt"
fi
load1=$(cut -d' ' -f1-3 /proc/loadavg)

"$python" - "$tmp" "$reps" "$load0" "$load1" "$(( $(date +%s) - t0 ))" "${engram_cmd[*]}" "${torch_cmd[*]}" \
  "${sst_cmd[*]}" "$trees" "$leaves" <<'EOF' | tee "$out"
import json, os, re, statistics, sys
tmp, reps, load0, load1, secs, ecmd, tcmd, scmd, trees, leaves = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
eng = {"node": [], "level": []}        # per rep: the better thread count's seconds per epoch
eng_threads = {"node": [], "level": []}
tor = {"pertree": [], "level": []}
tor_threads = {"pertree": [], "level": []}
meta, header = None, None
for r in range(1, reps + 1):
    best = {}
    for threads in (1, 2):
        for line in open(f"{tmp}/engram-{r}-{threads}.txt"):
            m = re.match(r"(node|level): ([\d.]+) s per training epoch", line)
            if m:
                s = float(m.group(2))
                if m.group(1) not in best or s < best[m.group(1)][0]:
                    best[m.group(1)] = (s, threads)
            elif header is None and "cell" in line:
                header = line.strip()
    for k, (s, n) in best.items():
        eng[k].append(s)
        eng_threads[k].append(n)
    best = {}
    for line in open(f"{tmp}/torch-{r}.jsonl"):
        j = json.loads(line)
        if "meta" in j:
            meta = j["meta"]
        elif j["exec"] not in best or j["epoch_s"] < best[j["exec"]][0]:
            best[j["exec"]] = (j["epoch_s"], j["threads"])
    for k, (s, n) in best.items():
        tor[k].append(s)
        tor_threads[k].append(n)
def cell(xs):
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}–{max(xs):.2f})"
print(f"# Tree-LSTM training speed: engram vs PyTorch ({trees} generated binary trees of {leaves} leaves)\n")
print(f"- engram: {header}")
print(f"- PyTorch {meta['torch']}: {meta['openblas']} (core {meta['openblas_core']}); malloc {meta['malloc']}; "
      f"{meta['trees']} trees, {meta['nodes']} nodes, vocabulary {meta['vocab']} (both sides)")
print(f"- {reps} repetitions per side, interleaved; each side's better of 1 and 2 threads per repetition "
      f"(chosen: engram node {sorted(set(eng_threads['node']))}, level {sorted(set(eng_threads['level']))}; "
      f"PyTorch per tree {sorted(set(tor_threads['pertree']))}, level {sorted(set(tor_threads['level']))})")
print(f"- load average {load0} at start, {load1} at end; {secs} s")
print(f"- engram: `{ecmd} --threads 1|2`")
print(f"- PyTorch: `{tcmd} --exec pertree|level --batches N`\n")
print("| execution (forward + backward + AdaGrad, batch 25) | engram s/epoch | PyTorch s/epoch | speed-up (medians) | target |")
print("|---|---|---|---|---|")
for e, t, name, target in (("node", "pertree", "node by node (PyTorch: per tree)", 5.0),
                           ("level", "level", "batched by level", 1.5)):
    ratio = statistics.median(tor[t]) / statistics.median(eng[e])
    print(f"| {name} | {cell(eng[e])} | {cell(tor[t])} | {ratio:.1f}x | ≥ {target}x: "
          f"{'met' if ratio >= target else 'missed'} |")
if os.path.exists(f"{tmp}/sst.txt"):
    print(f"\nSST training epoch (8,544 trees), batch 100, hidden 150, one thread: `{scmd}`\n")
    print("| execution | engram s/epoch | DyNet's published s/epoch (Neubig et al. 2017, another machine) |")
    print("|---|---|---|")
    for line in open(f"{tmp}/sst.txt"):
        m = re.match(r"(node|level): ([\d.]+) s per training epoch", line)
        if m:
            print(f"| {m.group(1)} | {float(m.group(2)):.1f} | 18.5 |")
EOF
