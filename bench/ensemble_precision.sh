#!/usr/bin/env bash
# fp32 against bf16 decode-time weights, and two-model ensembles, for the pointer, memn2n, ntm and
# tree families (bench/results_{pointer,memn2n,ntm,tree}.md, "bf16 weights and ensembles"): two
# seeds of a shortened shipped recipe per family, then each family's own eval verb on each model
# and on the two as one ensemble (--ensemble), in fp32 and in bf16 (--precision). Every run and
# evaluation is one thread, nice; runs already trained (RUNS/NAME/best or model) are not trained
# again. Outputs: RUNS/eval/FAMILY-{s1,s2,ens}-{fp32,bf16}.txt.
#
# Usage: bench/ensemble_precision.sh
# Environment (all optional):
#   BUILD=dir     build directory holding the engram binary (default build)
#   RUNS=dir      where the run directories go (default runs/ens)
#   TRAIN=0       only evaluate what is there
#   ENGRAM_DATA_DIR  the corpora (bAbI, SST; default ../shared/data)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=${BUILD:-build}/engram
runs=${RUNS:-runs/ens}
export ENGRAM_DATA_DIR=${ENGRAM_DATA_DIR:-$root/../shared/data} OMP_NUM_THREADS=1
run() { nice -n 5 "$bin" "$@"; }
mkdir -p "$runs/eval"

if [ "${TRAIN:-1}" != 0 ]; then
  for s in 1 2; do
    # tree: the Tree-LSTM fine recipe, 6 epochs (best/ by dev root accuracy)
    [ -d "$runs/tree-s$s/best" ] || run train configs/sst-treelstm-fine.yaml --threads 1 --set train.seed=$s \
      --set train.max_epochs=6 --set train.run_dir="$runs/tree-s$s" > "$runs/tree-s$s.log"
    # ntm: the copy recipe, 50,000 updates
    [ -d "$runs/ntm-s$s/best" ] || run train configs/ntm-copy.yaml --threads 1 --set train.seed=$s \
      --set train.max_steps=50000 --set train.run_dir="$runs/ntm-s$s" > "$runs/ntm-s$s.log"
    # memn2n: the 1k joint recipe with one seed
    [ -d "$runs/babi-s$s/model" ] || run train configs/babi-1k-joint.yaml --threads 1 --set "task.seeds=[$s]" \
      --set data.dir="$ENGRAM_DATA_DIR/babi/en" --set train.run_dir="$runs/babi-s$s" > "$runs/babi-s$s.log"
    # pointer: the sorting recipe, 10 minutes
    [ -d "$runs/sort-s$s/best" ] || run train configs/pointer-sort.yaml --threads 1 --set train.seed=$s \
      --set train.max_minutes=10 --set train.run_dir="$runs/sort-s$s" > "$runs/sort-s$s.log"
  done
fi

for p in fp32 bf16; do
  for m in s1 s2 ens; do
    one=s1
    [ "$m" = s2 ] && one=s2
    e() { if [ "$m" = ens ]; then printf -- '--ensemble %s' "$1"; fi; }  # the second model, for the ensemble
    run sentiment eval -m "$runs/tree-$one" $(e "$runs/tree-s2") --split test --threads 1 --precision $p \
      > "$runs/eval/tree-$m-$p.txt"
    run babi eval -m "$runs/babi-$one/model" $(e "$runs/babi-s2/model") --precision $p --json \
      > "$runs/eval/babi-$m-$p.txt"
    run ntm eval -m "$runs/ntm-$one" $(e "$runs/ntm-s2") --lengths 10,20,30,50,80,120 --threads 1 --precision $p \
      > "$runs/eval/ntm-$m-$p.txt"
    run pointer eval -m "$runs/sort-$one" $(e "$runs/sort-s2") --n 5,10,20 --threads 1 --precision $p \
      > "$runs/eval/sort-$m-$p.txt"
  done
done
echo "wrote $runs/eval/"
