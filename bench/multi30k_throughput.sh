#!/usr/bin/env bash
# Bulk translation, engram vs PyTorch, on the real job (issue "Bulk throughput"): a trained
# Multi30k De->En run translates test_2016_flickr (1,000 sentences, each decoded to <eos>) with
# `engram translate` and with bench/pytorch/translate.py, which reads the same checkpoint into the
# same network and decodes with the same rules (length-sorted batches, finished rows dropped,
# engram's beam search; fp32 outputs are identical token for token). For each batch size,
# search and precision both sides run REPS times, interleaved; each prints its sentences/s,
# target tokens/s (SentencePiece pieces + <eos> of the output, counted the same way for both) and
# the BLEU (sacreBLEU 13a, engram eval) of its output. Then the large product of each precision
# (build/bench/blas_bench "precision:M=64,N=32000,K=1024") and the sgemm peak (2048³), measured
# in the same run.
#
# engram's time is its process's wall time on the file minus its wall time on an empty input
# (loading the model); PyTorch's is the script's own clock around tokenising, decoding and
# detokenising, after one warm-up batch. Both sides: THREADS threads (the PyTorch side also sets
# OpenBLAS's and OMP_NUM_THREADS), the OpenBLAS each links (DESIGN.md "Benchmarking fairly").
#
# Usage: bench/multi30k_throughput.sh RUN_DIR
# Environment (all optional):
#   BUILD=dir          build directory (default build): engram, bench/blas_bench
#   ENGRAM_DATA_DIR    data root (default ../shared/data)
#   REPS=N             repetitions per side and workload (default 1)
#   THREADS=N          threads on both sides (default 1)
#   BATCHES="64 1"     batch sizes; BEAMS="1 5"; PRECISIONS="fp32 bf16 int8"
#   LINES=N            translate the first N test sentences only (default: all)
#   SHORTLIST="off on" with the model's shortlist.tsv (engram shortlist) too, on both sides
#                      (translate --shortlist; translate.py --shortlist); default "off", or
#                      "off on" when the model directory has a shortlist.tsv
#   PROFILE=1          also the time split of each batch-64 workload: engram under `perf record`
#                      (from the end of its model's load)
#                      (bench/tools/perf_split.py), PyTorch under torch.profiler (--profile)
#   OUT=file           Markdown output (default $BUILD/multi30k_throughput_last.md)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BUILD:-build}
bin=$build/engram
data=${ENGRAM_DATA_DIR:-../shared/data}
reps=${REPS:-1}
threads=${THREADS:-1}
batches=${BATCHES:-64 1}
beams=${BEAMS:-1 5}
precisions=${PRECISIONS:-fp32 bf16 int8}
out=${OUT:-$build/multi30k_throughput_last.md}
python=/usr/bin/python3
libdir=/usr/lib/x86_64-linux-gnu
[ $# -eq 1 ] || { echo "usage: bench/multi30k_throughput.sh RUN_DIR" >&2; exit 2; }
run=$1
[ -x "$build/bench/blas_bench" ] || { echo "multi30k_throughput.sh: $build/bench/blas_bench missing" >&2; exit 1; }
"$python" -c 'import torch, sentencepiece' 2>/dev/null ||
  { echo "multi30k_throughput.sh: $python cannot import torch and sentencepiece (make bench installs them)" >&2; exit 1; }
[ "${PROFILE:-0}" != 1 ] || command -v perf > /dev/null ||
  { echo "multi30k_throughput.sh: PROFILE=1 needs perf (make bench installs linux-perf)" >&2; exit 1; }
. bench/multi30k_test.sh multi30k_throughput.sh
[ -z "${LINES:-}" ] || { head -n "$LINES" "$tmp/src.de" > "$tmp/s" && mv "$tmp/s" "$tmp/src.de";
                         head -n "$LINES" "$tmp/ref.en" > "$tmp/r" && mv "$tmp/r" "$tmp/ref.en"; }
model=$("$python" - "$run" <<'EOF'
import os, sys
d = sys.argv[1]
for c in (d, os.path.join(d, "best"), os.path.join(d, "last")):
    if os.path.isfile(os.path.join(c, "model.safetensors")):
        print(c); break
else:
    sys.exit(f"multi30k_throughput.sh: no checkpoint in {d} (nor its best/ or last/)")
EOF
)

shortlists=${SHORTLIST:-off}
[ -n "${SHORTLIST:-}" ] || [ ! -f "$model/shortlist.tsv" ] || shortlists="off on"
[[ " $shortlists " != *" on "* ]] || [ -f "$model/shortlist.tsv" ] ||
  { echo "multi30k_throughput.sh: SHORTLIST=on needs $model/shortlist.tsv (engram shortlist)" >&2; exit 1; }
base_env=(env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS -u GOTO_NUM_THREADS)
. bench/torch_coretype.sh
engram_env=("${base_env[@]}" "LD_LIBRARY_PATH=$libdir/openblas-pthread")
# PyTorch's OpenMP pool sized to THREADS as well: at its default (one thread per core) the pool's
# other threads compete with the decoding thread for the cores.
torch_env=("${base_env[@]}" -u OPENBLAS_CORETYPE "LD_LIBRARY_PATH=$libdir/openblas-openmp" "${coretype[@]}" "OMP_NUM_THREADS=$threads")
: > "$tmp/empty"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s)
for rep in $(seq "$reps"); do
  for batch in $batches; do
    for beam in $beams; do
      for p in $precisions; do
       for sl in $shortlists; do
        name="$batch-$beam-$p-$sl"
        echo "rep $rep/$reps: batch $batch, beam $beam, $p, shortlist $sl" >&2
        sl_engram=() sl_torch=()
        [ "$sl" = off ] || { sl_engram=(--shortlist); sl_torch=(--shortlist "$model/shortlist.tsv"); }
        cmd=("${engram_env[@]}" "$bin" translate -m "$model" --threads "$threads" --batch "$batch" --beam "$beam"
             --precision "$p" "${sl_engram[@]}")
        a=$(date +%s.%N); "${cmd[@]}" < "$tmp/empty" > /dev/null; b=$(date +%s.%N)
        "${cmd[@]}" < "$tmp/src.de" > "$tmp/engram-$name.en"; c=$(date +%s.%N)
        echo "$name $rep $(echo "($c - $b) - ($b - $a)" | bc -l)" >> "$tmp/engram.times"
        "${torch_env[@]}" "$python" bench/pytorch/translate.py --model "$model" --input "$tmp/src.de" \
          --output "$tmp/torch-$name.en" --batch "$batch" --beam "$beam" --precision "$p" --threads "$threads" \
          "${sl_torch[@]}" > "$tmp/torch-$name-$rep.json"
        if [ "${PROFILE:-0}" = 1 ] && [ "$rep" = 1 ] && [ "$batch" = 64 ]; then
          echo "  profiling" >&2
          # Sampling starts after the model's load (the empty input's wall time), as PyTorch's
          # profile starts after its own.
          delay=$(echo "($b - $a) * 1000 / 1" | bc)
          perf record -q -F 999 -D "$delay" -o "$tmp/perf-$name.data" -- "${cmd[@]}" < "$tmp/src.de" > /dev/null 2>&1
          "$python" bench/tools/perf_split.py "$tmp/perf-$name.data" > "$tmp/split-engram-$name.json"
          "${torch_env[@]}" "$python" bench/pytorch/translate.py --model "$model" --input "$tmp/src.de" \
            --output /dev/null --batch "$batch" --beam "$beam" --precision "$p" --threads "$threads" "${sl_torch[@]}" --profile \
            | "$python" -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["split"]))' > "$tmp/split-torch-$name.json"
        fi
       done
      done
    done
  done
  echo "rep $rep/$reps: large products" >&2
  "${engram_env[@]}" "$build/bench/blas_bench" --benchmark_filter="precision:M=64.*/t$threads/|M=2048.*/dispatch/t$threads/" \
    --benchmark_min_time=0.5 --benchmark_format=json > "$tmp/peak-$rep.json" 2>/dev/null
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
for f in "$tmp"/engram-*.en "$tmp"/torch-*.en; do
  echo "$(basename "$f" .en) $("$bin" eval bleu -b "$f" "$tmp/ref.en")" >> "$tmp/bleu"
done
differ=""
for f in "$tmp"/engram-*.en; do
  n=$(basename "$f" .en); n=${n#engram-}
  differ+="$n=$(diff "$f" "$tmp/torch-$n.en" | grep -c '^<' || true) "
done

"$python" - "$tmp" "$model" "$reps" "$threads" "$load0" "$load1" "$(( $(date +%s) - t0 ))" \
  "$(git log --format=%h -1 2>/dev/null || echo '?')" "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" \
  "$differ" <<'EOF' | tee "$out"
import glob, json, os, re, statistics, sys
import sentencepiece
tmp, model, reps, threads, load0, load1, secs, commit, cpu, differ = sys.argv[1:]
spm_name = "joint.spm" if os.path.exists(os.path.join(model, "joint.spm")) else "tgt.spm"
sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(model, spm_name))
def tokens(path):
    with open(path, encoding="utf-8") as f:
        return sum(len(sp.encode(line.rstrip("\n"))) + 1 for line in f)
eng, tor = {}, {}
for line in open(f"{tmp}/engram.times"):
    name, _, sec = line.split()
    eng.setdefault(name, []).append(float(sec))
for path in glob.glob(f"{tmp}/torch-*.json"):
    name = re.match(r"torch-(.*)-\d+\.json", os.path.basename(path)).group(1)
    j = json.loads(open(path).read())
    tor.setdefault(name, []).append(j["seconds"])
    meta = j
bleu = dict(line.split() for line in open(f"{tmp}/bleu"))
differ = dict(d.split("=") for d in differ.split())
n = sum(1 for _ in open(f"{tmp}/src.de"))
med = statistics.median
print(f"# Bulk translation of Multi30k test_2016_flickr: engram vs PyTorch\n")
print(f"- CPU: {cpu}; {threads} thread(s) per side; load average {load0} at start, {load1} at end; {secs} s")
print(f"- model: `{model}`; {n} sentences; engram {commit}; PyTorch {meta['torch']} "
      f"(int8 engine {meta['quantized_engine']}); {reps} run(s) per side, interleaved, median shown")
print(f"- command: `bench/multi30k_throughput.sh {model}` (REPS={reps} THREADS={threads})\n")
print("| batch | search | precision | shortlist | engram sent/s | PyTorch sent/s | engram / PyTorch | engram tok/s | PyTorch tok/s "
      "| BLEU engram / PyTorch | outputs differing |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
def key(name):
    b, k, p, sl = name.split("-")
    return (-int(b), int(k), ["fp32", "bf16", "int8"].index(p), sl == "on")
for name in sorted(eng, key=key):
    b, k, p, sl = name.split("-")
    e, t = med(eng[name]), med(tor[name])
    te, tt = tokens(f"{tmp}/engram-{name}.en"), tokens(f"{tmp}/torch-{name}.en")
    print(f"| {b} | {'greedy' if k == '1' else 'beam ' + k} | {p} | {sl} | {n / e:.1f} | {n / t:.1f} | **{t / e:.2f}x** "
          f"| {te / e:.0f} | {tt / t:.0f} | {bleu['engram-' + name]} / {bleu['torch-' + name]} | {differ[name]} |")
splits = sorted(glob.glob(f"{tmp}/split-*.json"))
if splits:
    print("\nWhere the time goes at batch 64 (shares; engram: `perf record` of the process, bench/tools/perf_split.py; "
          "PyTorch: torch.profiler's self CPU time per op over the unprofiled wall time, the rest Python):\n")
    rows = [(re.match(r"split-(\w+)-(.*)\.json", os.path.basename(p)).groups(), json.load(open(p))) for p in splits]
    cols = sorted({c for _, sp in rows for c in sp})
    print("| side | workload | " + " | ".join(cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    for (side, name), sp in sorted(rows, key=lambda r: (key(r[0][1]), r[0][0])):
        b, k, p, sl = name.split("-")
        work = f"{'greedy' if k == '1' else 'beam ' + k} {p}" + (", shortlist" if sl == "on" else "")
        print(f"| {side} | {work} | " + " | ".join(f"{100 * sp.get(c, 0):.0f}%" for c in cols) + " |")
print("\nLarge products (build/bench/blas_bench, engram's kernels, same run), GFLOP/s or GOPS:")
peaks = {}
for path in glob.glob(f"{tmp}/peak-*.json"):
    for bm in json.load(open(path))["benchmarks"]:
        v = bm.get("GOPS", bm.get("GFLOP"))
        if v is not None:
            peaks.setdefault(bm["name"], []).append(v)
for name in sorted(peaks):
    print(f"- {name}: {med(peaks[name]):.1f}")
EOF
