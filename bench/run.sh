#!/usr/bin/env bash
# engram vs PyTorch on the same workloads (`make bench`; DESIGN.md "Benchmarking fairly").
# Runs the engram programs (build/bench/*_bench) and bench/pytorch/bench_torch.py interleaved,
# A B A B, BENCH_REPS times each; bench/aggregate.py then prints medians, min-max spreads,
# speed-ups and GFLOP/s as Markdown, to stdout and to bench/last_run.md. Raw results stay in
# $BUILD/bench-runs/<date>/ (Google Benchmark JSON, PyTorch JSON lines, logs).
#
# Usage: bench/run.sh [--quick]
# Environment (all optional):
#   BENCH_QUICK=1           same as --quick: 2 repetitions, short timings (checks the plumbing)
#   BENCH_REPS=N            repetitions per side (default 5; at least 5 for numbers you publish)
#   BUILD=dir               build directory with the bench programs (default build, as the Makefile)
#   BENCH_FILTER=regex      only workloads whose name matches, on both sides (e.g. '^sgemm')
#   BENCH_ENGRAM_CORETYPE   OPENBLAS_CORETYPE for engram's side: default = inherited from the
#                           environment (what engram's users run with); "unset" removes it
#   BENCH_TORCH_CORETYPE    OPENBLAS_CORETYPE for PyTorch (default: bench/torch_coretype.sh, SkylakeX with AVX-512)
#   BENCH_TORCH_BLAS        openmp (default) | pthread: which Debian OpenBLAS build PyTorch loads
#   BENCH_TORCH_ATEN        ATEN_CPU_CAPABILITY for PyTorch (avx2 | avx512; default: torch's choice)
# Each side's BLAS is chosen with LD_LIBRARY_PATH, whatever the Debian alternatives point at:
# engram gets openblas-pthread (what it is built and tested with), PyTorch's libblas.so.3 the
# OpenMP build (its threads are OpenMP threads, so torch.set_num_threads governs them).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
quick=${BENCH_QUICK:-0}
[ "${1:-}" = "--quick" ] && quick=1
build=${BUILD:-build}
python=/usr/bin/python3
libdir=/usr/lib/x86_64-linux-gnu
filter=${BENCH_FILTER:-}
if [ "$quick" = 1 ]; then
  reps=${BENCH_REPS:-2}; gb_min_time=0.03; py_repeats=2; py_min_time=0.03
else
  reps=${BENCH_REPS:-5}; gb_min_time=0.25; py_repeats=3; py_min_time=0.1
fi

# ---- the engram programs (built by `make build`; bench/CMakeLists.txt)
progs=()
for src in bench/*_bench.cc; do progs+=("$(basename "$src" .cc)"); done
[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
grep -q 'ENGRAM_BUILD_BENCH:BOOL=ON' "$build/CMakeCache.txt" ||
  { echo "bench/run.sh: $build was configured with ENGRAM_BUILD_BENCH=OFF" >&2; exit 1; }
# Up to date with the sources (a no-op after `make build`); re-configuring picks up new *_bench.cc.
cmake -S . -B "$build" >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${progs[@]}" >/dev/null ||
  { echo "bench/run.sh: building ${progs[*]} in $build failed" >&2; exit 1; }
"$python" -c 'import torch' 2>/dev/null ||
  { echo "bench/run.sh: $python cannot import torch; run scripts/install-bench-deps.sh" >&2; exit 1; }

# ---- each side's environment
engram_env=(env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS -u GOTO_NUM_THREADS
            "LD_LIBRARY_PATH=$libdir/openblas-pthread")
case "${BENCH_ENGRAM_CORETYPE-inherit}" in
  inherit) [ -n "${OPENBLAS_CORETYPE:-}" ] && engram_env+=("OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE") ;;
  unset) engram_env=(env -u OPENBLAS_CORETYPE "${engram_env[@]:1}") ;;
  *) engram_env+=("OPENBLAS_CORETYPE=$BENCH_ENGRAM_CORETYPE") ;;
esac
torch_blas=${BENCH_TORCH_BLAS:-openmp}
. bench/torch_coretype.sh
[ -n "${BENCH_TORCH_CORETYPE:-}" ] && coretype=("OPENBLAS_CORETYPE=$BENCH_TORCH_CORETYPE")
torch_env=(env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS -u GOTO_NUM_THREADS -u OPENBLAS_CORETYPE
           "LD_LIBRARY_PATH=$libdir/openblas-$torch_blas" "${coretype[@]}")
[ -n "${BENCH_TORCH_ATEN:-}" ] && torch_env+=("ATEN_CPU_CAPABILITY=$BENCH_TORCH_ATEN")
[ -d "$libdir/openblas-$torch_blas" ] ||
  { echo "bench/run.sh: $libdir/openblas-$torch_blas missing; run scripts/install-bench-deps.sh" >&2; exit 1; }

run_dir="$build/bench-runs/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$run_dir"

quote() {  # a command line for eval and for people: quotes only the words that need it
  local w out=()
  for w in "$@"; do
    if [[ "$w" =~ ^[A-Za-z0-9_./=:,+@-]+$ ]]; then out+=("$w"); else out+=("$(printf '%q' "$w")"); fi
  done
  echo "${out[*]}"
}
engram_cmd() {  # program, output json -> the command line
  local cmd=("${engram_env[@]}" "$build/bench/$1" "--benchmark_min_time=$gb_min_time"
             "--benchmark_out=$2" --benchmark_out_format=json)
  [ -n "$filter" ] && cmd+=("--benchmark_filter=$filter")
  quote "${cmd[@]}"
}
torch_cmd() {
  local cmd=("${torch_env[@]}" "$python" bench/pytorch/bench_torch.py --threads 1,2
             --repeats "$py_repeats" --min-time "$py_min_time")
  [ -n "$filter" ] && cmd+=(--filter "$filter")
  quote "${cmd[@]}"
}

# ---- header: date, machine, commands
{
  echo "# engram benchmark run"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "- machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores" \
       "($(lscpu | sed -n 's/^Core(s) per socket: *//p' | head -1) per socket), $(free -g | awk '/^Mem:/ {print $2}') GiB," \
       "kernel $(uname -r), flags: $(grep -o -w -E 'avx512f|avx512_bf16|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  echo "- engram: commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' + uncommitted changes')," \
       "build $build (CMAKE_BUILD_TYPE=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt" | grep . || echo 'Release (default)'), ENGRAM_NATIVE=$(sed -n 's/^ENGRAM_NATIVE:BOOL=//p' "$build/CMakeCache.txt"))"
  echo "- mode: $([ "$quick" = 1 ] && echo 'QUICK (plumbing check, not for publishing)' || echo full)," \
       "$reps repetitions per side, interleaved engram, pytorch, engram, ..."
  echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "Commands (one repetition; REP = $run_dir/repN):"
  echo
  echo '```'
  for p in "${progs[@]}"; do engram_cmd "$p" "REP/engram_$p.json"; done
  echo "$(torch_cmd) > REP/torch.jsonl"
  echo '```'
} > "$run_dir/header.md"
cat "$run_dir/header.md" >&2

# ---- A B A B
start=$(date +%s)
for ((i = 1; i <= reps; i++)); do
  rep="$run_dir/rep$i"
  mkdir -p "$rep"
  echo "bench/run.sh: repetition $i/$reps: engram" >&2
  for p in "${progs[@]}"; do
    eval "$(engram_cmd "$p" "$rep/engram_$p.json")" > "$rep/engram_$p.log" 2>&1 ||
      echo "bench/run.sh: $p failed (see $rep/engram_$p.log)" >&2
  done
  echo "bench/run.sh: repetition $i/$reps: pytorch" >&2
  eval "$(torch_cmd)" > "$rep/torch.jsonl" 2> "$rep/torch.log" ||
    echo "bench/run.sh: bench_torch.py failed (see $rep/torch.log)" >&2
done
{
  echo "- load average at end: $(cut -d' ' -f1-3 /proc/loadavg); wall time $(( $(date +%s) - start )) s"
  echo "- raw results: $run_dir"
} >> "$run_dir/header.md"

"$python" bench/aggregate.py "$run_dir" > "$run_dir/summary.md"
cp "$run_dir/summary.md" bench/last_run.md
cat bench/last_run.md
