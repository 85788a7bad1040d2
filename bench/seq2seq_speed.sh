#!/usr/bin/env bash
# Seq2seq training and decoding speed, engram vs PyTorch (issue 3; DESIGN.md "Benchmarking
# fairly"): build/bench/seq2seq_speed (bench/seq2seq_speed.cc) and bench/pytorch/seq2seq.py, the
# same architecture (bi-GRU encoder 512 per direction, GRU decoder 512, additive attention,
# embeddings 256, vocab 8k, batch 64, lengths 20), interleaved A B A B, REPS times each. Prints
# medians with min-max spreads, the speed-ups, and the training step's GFLOP/s next to the
# machine's sgemm peak (build/bench/blas_bench at 2048^3, dispatch, same thread count, measured in
# the same run).
# Each side runs with 1 and 2 threads; each side's better thread count is its number.
#
# Usage: bench/seq2seq_speed.sh
# Environment (all optional):
#   BUILD=dir         build directory holding bench/seq2seq_speed and bench/blas_bench (default build)
#   REPS=N            repetitions per side (default 5)
#   THREADS=1,2       thread counts tried on both sides
#   STEPS=N           timed training steps per measurement (default 3)
#   SENTENCES=N       sentences decoded per measurement (default 64)
#   PRECISION=list    decoding precisions on both sides (default fp32,bf16; bf16: engram's
#                     --precision bf16, PyTorch's model cast to bfloat16; int8: engram's --precision
#                     int8, PyTorch's quantize_dynamic on the onednn engine)
#   VOCAB=N HIDDEN=N UNITS=N LAYERS=N
#                     the model's shape on both sides (default 8000, 512, 512, 1): vocabulary,
#                     decoder hidden size, encoder units per direction, encoder layers; the
#                     WMT-like shape of the throughput issue is VOCAB=32000 HIDDEN=1024 UNITS=512 LAYERS=2
#   WHAT=list         workloads on both sides (default train,greedy,beam)
#   OUT=file          Markdown output (default $BUILD/seq2seq_speed_last.md)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BUILD:-build}
bin=$build/bench/seq2seq_speed
reps=${REPS:-5}
threads=${THREADS:-1,2}
steps=${STEPS:-3}
sentences=${SENTENCES:-64}
precision=${PRECISION:-fp32,bf16}
vocab=${VOCAB:-8000} hidden=${HIDDEN:-512} units=${UNITS:-512} layers=${LAYERS:-1} what=${WHAT:-train,greedy,beam}
engram_shape=(--vocab "$vocab" --what "$what" --set hidden="$hidden" --set encoder_hidden="$units"
              --set encoder_layers="$layers")
torch_shape=(--vocab "$vocab" --what "$what" --hidden "$hidden" --units "$units" --layers "$layers")
out=${OUT:-$build/seq2seq_speed_last.md}
python=/usr/bin/python3
libdir=/usr/lib/x86_64-linux-gnu
[ -x "$bin" ] || { echo "seq2seq_speed.sh: $bin missing (build it, or set BUILD)" >&2; exit 1; }
[ -x "$build/bench/blas_bench" ] || { echo "seq2seq_speed.sh: $build/bench/blas_bench missing" >&2; exit 1; }
"$python" -c 'import torch' 2>/dev/null || { echo "seq2seq_speed.sh: $python cannot import torch" >&2; exit 1; }

. bench/torch_coretype.sh
base_env=(env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS -u GOTO_NUM_THREADS)
engram_env=("${base_env[@]}" "LD_LIBRARY_PATH=$libdir/openblas-pthread")
torch_cmd=("${base_env[@]}" -u OPENBLAS_CORETYPE "LD_LIBRARY_PATH=$libdir/openblas-openmp" "${coretype[@]}"
           "$python" bench/pytorch/seq2seq.py --threads "$threads" --steps "$steps" --sentences "$sentences"
           --precision "$precision" "${torch_shape[@]}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
load0=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s)
for rep in $(seq "$reps"); do
  for t in ${threads//,/ }; do
    echo "rep $rep/$reps: engram, $t thread(s)" >&2
    "${engram_env[@]}" "$bin" --threads "$t" --steps "$steps" --sentences "$sentences" \
      --precision "$precision" "${engram_shape[@]}" > "$tmp/engram-$rep-t$t.txt"
  done
  echo "rep $rep/$reps: pytorch" >&2
  "${torch_cmd[@]}" > "$tmp/torch-$rep.jsonl"
  echo "rep $rep/$reps: sgemm peak" >&2
  "${engram_env[@]}" "$build/bench/blas_bench" --benchmark_filter='M=2048.*/dispatch/' \
    --benchmark_min_time=0.5 --benchmark_format=json > "$tmp/peak-$rep.json" 2>/dev/null
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
engram_example="${engram_env[*]} $bin --threads T --steps $steps --sentences $sentences --precision $precision ${engram_shape[*]}"

"$python" - "$tmp" "$reps" "$threads" "$load0" "$load1" "$(( $(date +%s) - t0 ))" "$engram_example" \
  "${torch_cmd[*]}" <<'EOF' | tee "$out"
import glob, json, re, statistics, sys
tmp, reps, threads, load0, load1, secs, ecmd, tcmd = sys.argv[1], int(sys.argv[2]), sys.argv[3], *sys.argv[4:]
threads = [int(t) for t in threads.split(",")]
eng, tor, peak, meta, header, gflop = {}, {}, {}, None, None, None
for r in range(1, reps + 1):
    for t in threads:
        for line in open(f"{tmp}/engram-{r}-t{t}.txt"):
            m = re.match(r"train: ([\d.]+) ms/step.* ([\d.]+) GFLOP/step", line)
            if m:
                eng.setdefault(("train", t), []).append(float(m.group(1)))
                gflop = float(m.group(2))
                continue
            m = re.match(r"(greedy|beam \d+)( bf16| int8)? batch (\d+): ([\d.]+) sentences/s", line)
            if m:
                name = f"{m.group(1)}{m.group(2) or ''} batch {m.group(3)}"
                eng.setdefault((name, t), []).append(float(m.group(4)))
            elif header is None:
                header = line.strip()
    for line in open(f"{tmp}/torch-{r}.jsonl"):
        j = json.loads(line)
        if "meta" in j:
            meta = j["meta"]
        else:
            tor.setdefault((j["name"], j["threads"]), []).append(j["value"])
    for b in json.load(open(f"{tmp}/peak-{r}.json"))["benchmarks"]:
        m = re.search(r"/t(\d+)/", b["name"])
        if m and "GFLOP" in b:
            peak.setdefault(int(m.group(1)), []).append(b["GFLOP"])
med = statistics.median
def best(d, name, lower):
    """(median, min, max, threads) of the best thread count for a workload."""
    cands = [(med(v), min(v), max(v), t) for (n, t), v in d.items() if n == name]
    return (min if lower else max)(cands, key=lambda c: c[0])
def cell(c, fmt="{:.1f}"):
    return f"{fmt.format(c[0])} ({fmt.format(c[1])}–{fmt.format(c[2])}), {c[3]}t"
print("# Seq2seq speed: engram vs PyTorch (the shape in the commands below; additive attention, E 256, B 64, S = T = 20)\n")
print(f"- engram: {header}")
print(f"- PyTorch {meta['torch']}: {meta['openblas']} (core {meta['openblas_core']}); malloc {meta['malloc']}")
print(f"- {reps} repetitions per side, interleaved; thread counts {threads} on both sides, each side's best shown; "
      f"load average {load0} at start, {load1} at end; {secs} s")
print(f"- engram: `{ecmd}`")
print(f"- PyTorch: `{tcmd}`\n")
print("| workload | engram | PyTorch | speed-up |")
print("|---|---|---|---|")
trained = any(n == "train" for n, _ in eng)
if trained:
    e, p = best(eng, "train", True), best(tor, "train", True)
    print(f"| training step, ms (lower is better) | {cell(e)} | {cell(p)} | **{p[0] / e[0]:.2f}x** |")
names = sorted({n for n, _ in eng if n != "train"},
               key=lambda n: ("int8" in n, "bf16" in n, n.startswith("beam"), -int(n.split()[-1])))
for n in names:
    e, p = best(eng, n, False), best(tor, n, False)
    print(f"| {n}, sentences/s | {cell(e)} | {cell(p)} | **{e[0] / p[0]:.2f}x** |")
if trained:
    e, p = best(eng, "train", True), best(tor, "train", True)
    print(f"\nTraining FLOPs (GEMMs of forward + backward, counted by engram from the shapes): {gflop:.2f} GFLOP per step.")
for t in sorted(peak):
    pk = med(peak[t])
    line = f"- sgemm peak with {t} thread(s) (2048³, dispatch): {pk:.1f} GFLOP/s"
    if trained and e[3] == t:
        line += f"; engram {gflop / e[0] * 1e3:.1f} GFLOP/s = {100 * gflop / e[0] * 1e3 / pk:.0f}% of it"
    if trained and p[3] == t:
        line += f"; PyTorch {gflop / p[0] * 1e3:.1f} GFLOP/s = {100 * gflop / p[0] * 1e3 / pk:.0f}% of it"
    print(line)
EOF
