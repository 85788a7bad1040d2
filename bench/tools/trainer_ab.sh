#!/usr/bin/env bash
# Fixed-seed runs whose metrics.jsonl (timing fields removed) two engram binaries must give bit for
# bit: a refactoring of the Trainer keeps behaviour when the md5 sums match.
#   bench/tools/trainer_ab.sh ENGRAM_BIN OUTDIR   (then: cmp OLD_OUT/x.txt NEW_OUT/x.txt)
# Runs: dates (validation, checkpoints, log windows, resumed from 120 to 200 steps), a bAbI task
# (two phases: linear start, then the main one), the NTM copy task (max_steps).
set -euo pipefail
bin=$1; out=$2; rm -rf "$out"; mkdir -p "$out"
export ENGRAM_DATA_DIR=${ENGRAM_DATA_DIR:-../shared/data}
cd "$(dirname "$0")/../.."
strip() { python3 -c "
import json,sys
for l in open(sys.argv[1]):
    j=json.loads(l)
    for k in ('elapsed_s','units_per_s','updates_per_s','seconds','allreduce_share'): j.pop(k,None)
    print(json.dumps(j,sort_keys=True))" "$1"; }
# 1: dates, with validation, checkpoints and log windows; then resumed to more steps
$bin train configs/dates.yaml --threads 1 --set train.max_steps=120 --set train.valid_every=50 --set train.checkpoint_every=30 --set train.log_every=20 --set train.run_dir=$out/dates > /dev/null
$bin train configs/dates.yaml --threads 1 --set train.max_steps=200 --set train.valid_every=50 --set train.checkpoint_every=30 --set train.log_every=20 --set train.run_dir=$out/dates > /dev/null
strip $out/dates/metrics.jsonl > $out/dates.txt; cat $out/dates/last/trainer.json | python3 -c "import json,sys; j=json.load(sys.stdin); j.pop('elapsed_s'); print(json.dumps(j,sort_keys=True))" >> $out/dates.txt
# 2: memn2n, one task, two phases (linear start then main), early stopping by patience
$bin train configs/babi-1k-pertask.yaml --threads 1 --set data.tasks=1 --set task.seeds=[1] --set train.max_epochs=6 --set train.run_dir=$out/babi > /dev/null
strip $out/babi/task-1/seed-1/metrics.jsonl > $out/babi.txt
# 3: ntm with max_steps and epochs
$bin train configs/ntm-copy.yaml --threads 1 --set train.max_steps=300 --set train.log_every=50 --set train.run_dir=$out/ntm > /dev/null
strip $out/ntm/metrics.jsonl > $out/ntm.txt
md5sum $out/*.txt
