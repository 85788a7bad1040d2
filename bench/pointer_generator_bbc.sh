#!/usr/bin/env bash
# The pointer-generator rows of bench/results_summarization.md: for one BBC task (headline or
# summary), the pointer-generator (copy), the same model without copy (`copy: false`) and copy +
# coverage (from the start), same vocabulary and the same training budget (train.max_minutes),
# trained side by side (so they share the machine alike), then each evaluated on the test split
# with beam 4; the eval prints ROUGE with rouge_score's stemmer (its default) and without.
#
# Usage: bench/pointer_generator_bbc.sh headline|summary [extra --set flags for every run]
# Environment (all optional):
#   BUILD=dir      build directory holding engram (default build)
#   RUNS=dir       where the run directories go (default runs)
#   MINUTES=N      train.max_minutes of every row (default: the config's)
#   EVAL_FLAGS=..  decoding flags of the evaluation (default: beam 4; summary: also
#                  --min-length 150 --block-ngram-repeat 3 --max-length 200, the length chosen on the
#                  validation split in bench/results_summarization.md; headline: --max-length 20)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
task=${1:?usage: bench/pointer_generator_bbc.sh headline|summary [--set KEY=VALUE ...]}
shift
case $task in headline | summary) ;; *) echo "pointer_generator_bbc.sh: unknown task '$task'" >&2; exit 2 ;; esac
bin=${BUILD:-build}/engram
runs=${RUNS:-runs}
config=configs/pointer-generator-bbc-$task.yaml
[ -x "$bin" ] || { echo "pointer_generator_bbc.sh: $bin missing (build it, or set BUILD)" >&2; exit 1; }
if [ -z "${EVAL_FLAGS:-}" ]; then
  if [ "$task" = summary ]; then EVAL_FLAGS="--beam 4 --min-length 150 --block-ngram-repeat 3 --max-length 200"
  else EVAL_FLAGS="--beam 4 --max-length 20"; fi
fi
minutes=()
[ -n "${MINUTES:-}" ] && minutes=(--set "train.max_minutes=$MINUTES")
declare -A rows=([copy]="" [nocopy]="--set pointer_generator.copy=false" [coverage]="--set pointer_generator.coverage=true")
mkdir -p "$runs"
echo "load before training: $(uptime)"
pids=()
for row in copy nocopy coverage; do
  run=$runs/pg-bbc-$task-$row
  # shellcheck disable=SC2086
  "$bin" train "$config" --threads 1 ${rows[$row]} "${minutes[@]}" --set "train.run_dir=$run" "$@" \
    > "$runs/pg-bbc-$task-$row.train.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
echo "load after training: $(uptime)"
for row in copy nocopy coverage; do
  echo "== $row: $(tail -1 "$runs/pg-bbc-$task-$row.train.log")"
done
for row in copy nocopy coverage; do
  run=$runs/pg-bbc-$task-$row
  # shellcheck disable=SC2086
  "$bin" pointer-generator eval -m "$run" --bbc test --threads 1 $EVAL_FLAGS --examples 8 > "$run.eval.txt" 2>&1 &
done
wait
echo "load after evaluation: $(uptime)"
for row in copy nocopy coverage; do
  echo "== $row"; cat "$runs/pg-bbc-$task-$row.eval.txt"
done
