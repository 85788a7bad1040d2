#!/usr/bin/env bash
# The Pointer Network accuracy runs of bench/results_pointer.md: sorting (n = 5-20), TSP
# (n = 5-20) and convex hull (n = 5-50) trained with the shipped configs, one thread each under
# nice, at most two at once (sorting and TSP side by side, the hull when sorting is done), then
# the eval tables: sorting at n = 5, 10, 20; TSP at n = 5, 10, 20 against Held-Karp and 25-50
# against the 2-opt + Or-opt heuristic, greedy and beam 5; hull at n = 5, 10, 50 (and 100, 200),
# greedy and over 16 views (`pointer eval --views 16`).
# The minute budgets: sorting 25, TSP 25, hull 100 (the results' runs: sorting as 15 minutes, then
# the same run resumed for 10 more, which the Trainer makes the same as one run of 25).
#
# Usage: bench/pointer_targets.sh [RUNS_DIR]     (default runs/targets)
# Environment (optional): BUILD=dir (default build), ENGRAM=binary (default $BUILD/engram), SORT_MIN, TSP_MIN, HULL_MIN (minutes),
#   SKIP_TRAIN=1 to only evaluate existing runs, INSTANCES (eval instances per n, default 1000),
#   LONG_INSTANCES (TSP n = 25-50, default 200).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BUILD:-build}
bin=${ENGRAM:-$build/engram}
runs=${1:-runs/targets}
instances=${INSTANCES:-1000}
[ -x "$bin" ] || { echo "pointer_targets.sh: $bin missing (build it, or set BUILD)" >&2; exit 1; }
mkdir -p "$runs"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

train() {  # NAME CONFIG MINUTES
  local name=$1 config=$2 minutes=$3
  echo "$(date -u +%H:%M:%S) train $name: $bin train $config --threads 1 --set train.max_minutes=$minutes --set train.run_dir=$runs/$name" >&2
  nice "$bin" train "$config" --threads 1 --set "train.max_minutes=$minutes" --set "train.run_dir=$runs/$name" \
    > "$runs/$name.log" 2>&1
  echo "$(date -u +%H:%M:%S) train $name: $(tail -1 "$runs/$name.log")" >&2
}

if [ -z "${SKIP_TRAIN:-}" ]; then
  train sort configs/pointer-sort.yaml "${SORT_MIN:-25}" &
  sort_pid=$!
  train tsp configs/pointer-tsp.yaml "${TSP_MIN:-25}" &
  tsp_pid=$!
  wait "$sort_pid"
  train hull configs/pointer-hull.yaml "${HULL_MIN:-100}" &
  hull_pid=$!
  wait "$tsp_pid"
  wait "$hull_pid"
fi

evaluate() {  # NAME INSTANCES ARGS...
  local name=$1 count=$2
  shift 2
  echo "## $name: engram pointer eval -m $runs/$name $* --instances $count"
  nice "$bin" pointer eval -m "$runs/$name" --threads 1 --instances "$count" "$@"
  echo
}
# Two evaluations at a time, one thread each (Held-Karp references for 1000 instances of n = 20
# take a while on a busy machine); TSP above n = 20 on the first $long instances of the same stream.
long=${LONG_INSTANCES:-200}
{
  evaluate tsp "$instances" --n 5,10,20 --beam 1
  evaluate tsp "$instances" --n 5,10,20 --beam 5
  evaluate tsp "$long" --n 25,30,40,50 --beam 1
  evaluate tsp "$long" --n 25,30,40,50 --beam 5
} > "$runs/eval-tsp.md" 2>&1 &
tsp_eval=$!
{
  evaluate sort "$instances" --n 5,10,20
  evaluate hull "$instances" --n 5,10,50,100,200
  evaluate hull "$instances" --n 5,10,50,100,200 --views 16
} > "$runs/eval-sort-hull.md" 2>&1
wait "$tsp_eval"
cat "$runs/eval-sort-hull.md" "$runs/eval-tsp.md" | tee "$runs/eval.md"
