#!/usr/bin/env bash
# Data-parallel training speed on this machine (issue "Beyond one machine"): the same `engram
# train` run as 1 rank x 1 thread (the reference), 1 rank x 2 threads and 2 ranks x 1 thread
# (mpirun), interleaved A B C A B C, REPS
# times each, for seq2seq on Multi30k (configs/multi30k-de-en.yaml, the recipe's model and
# batches) and MemN2N on bAbI 1k joint (configs/babi-1k-joint.yaml). Figures come from the runs'
# own metrics.jsonl (updates/s over the logged windows after the first, so start-up and the
# final validation are not counted): median updates/s with min-max, time per epoch
# (batches per epoch / updates/s), the allreduce's share of the 2-rank step, the gradient bytes
# each rank sends per update. Prints Markdown (stdout and $OUT).
#
# Usage: bench/mpi_speed.sh
# Environment (all optional):
#   BUILD=dir   build directory holding engram (default build)
#   REPS=N      repetitions per side (default 3)
#   STEPS=N     updates per seq2seq run (default 120; MemN2N runs 10x as many)
#   OUT=file    Markdown output (default $BUILD/mpi_speed_last.md)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BUILD:-build}
bin=$root/$build/engram
reps=${REPS:-3}
steps=${STEPS:-120}
out=${OUT:-$build/mpi_speed_last.md}
data=${ENGRAM_DATA_DIR:-$root/../shared/data}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
mpirun=$(command -v mpirun) || { echo "mpi_speed: no mpirun (make deps installs openmpi-bin)" >&2; exit 1; }

# name | config | --set overrides (no validation until the end, short runs)
models=(
  "seq2seq Multi30k de-en|configs/multi30k-de-en.yaml|--set train.max_minutes=0 --set train.max_epochs=0 --set train.max_steps=$steps --set train.log_every=20 --set data.bleu_sentences=1"
  "MemN2N bAbI 1k joint|configs/babi-1k-joint.yaml|--set data.dir=$data/babi/en --set task.seeds=[1] --set task.linear_start.enabled=false --set train.max_epochs=0 --set train.max_steps=$((steps * 10)) --set train.log_every=200"
)

# mean of a metrics key over the train lines after the first
mean_of() {  # file key
  grep '"event":"train"' "$1" | tail -n +2 | sed -nE "s/.*\"$2\":([-0-9.eE+]+).*/\1/p" |
    awk '{ s += $1; n++ } END { if (n) printf "%.6g\n", s / n; else print "nan" }'
}
metrics_file() { find "$1" -name metrics.jsonl | head -1; }
median() { sort -g | awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.3g (%.3g-%.3g)", m, a[1], a[NR] }'; }
median_value() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

{
  echo "## Data-parallel training: 1 rank x 2 threads vs 2 ranks x 1 thread"
  echo
  echo "$(date -u +%Y-%m-%d), $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores;"
  echo "commit $(git rev-parse --short HEAD 2> /dev/null || echo unknown); command: \`bench/mpi_speed.sh\` (REPS=$reps STEPS=$steps)"
  echo
  echo "| model | parameters | gradient bytes sent per rank per update | 1 rank x 1 thread: updates/s | 1 rank x 2 threads: updates/s | 2 ranks x 1 thread: updates/s | 2 ranks / 1 rank x 2 threads | time per epoch, 1 rank x 2 threads / 2 ranks | allreduce share of a 2-rank step |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
} | tee "$out"

m=0
for entry in "${models[@]}"; do
  IFS='|' read -r name config sets <<< "$entry"
  m=$((m + 1))
  : > "$tmp/single" && : > "$tmp/one" && : > "$tmp/two" && : > "$tmp/share"
  vocab=""
  for rep in $(seq 1 "$reps"); do
    for side in single one two; do
      dir=$tmp/m$m-$side-$rep
      mkdir -p "$dir"
      [ -n "$vocab" ] && { cp "$vocab"/*.spm "$dir"/ 2> /dev/null || true; }  # reuse the SentencePiece model
      # shellcheck disable=SC2086
      if [ $side = single ]; then
        "$bin" train "$config" $sets --threads 1 --set train.run_dir="$dir" > "$dir.log" 2>&1
      elif [ $side = one ]; then
        "$bin" train "$config" $sets --threads 2 --set train.run_dir="$dir" > "$dir.log" 2>&1
      else
        OMP_NUM_THREADS=1 "$mpirun" -np 2 --bind-to none "$bin" train "$config" $sets --threads 1 \
          --set train.run_dir="$dir" > "$dir.log" 2>&1
        mean_of "$(metrics_file "$dir")" allreduce_share >> "$tmp/share"
        sed -nE 's/.*\(([0-9]+) batches per epoch, ([0-9]+) parameters\).*/\1 \2/p' "$dir.log" | head -1 > "$tmp/shape"
      fi
      mean_of "$(metrics_file "$dir")" updates_per_s >> "$tmp/$side"
      echo "  $name, $side, repetition $rep: $(tail -1 "$tmp/$side") updates/s" >&2
      if [ -z "$vocab" ] && ls "$dir"/*.spm > /dev/null 2>&1; then vocab=$dir; fi
    done
  done
  read -r per_epoch params < "$tmp/shape"
  u1=$(median_value < "$tmp/one") u2=$(median_value < "$tmp/two")
  awk -v name="$name" -v p="$params" -v e="$per_epoch" -v u1="$u1" -v u2="$u2" -v a="$(median < "$tmp/one")" \
      -v c="$(median < "$tmp/single")" \
      -v b="$(median < "$tmp/two")" -v s="$(median_value < "$tmp/share")" 'BEGIN {
    printf "| %s | %d | %.1f MB | %s | %s | %s | %.2f | %.1f s / %.1f s | %.0f%% |\n", name, p, 4 * p / 1e6, c, a, b, u2 / u1,
           e / u1, e / u2, 100 * s }' | tee -a "$out"
done
echo | tee -a "$out"
echo "Gradient bytes: 4 bytes per parameter, the whole flat gradient in one MPI_Allreduce (float32, no compression);" \
     "with 2 ranks each rank sends about one gradient per update (ring or recursive doubling alike)." | tee -a "$out"
