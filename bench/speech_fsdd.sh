#!/usr/bin/env bash
# The rows of bench/results_speech.md: FSDD single digits on the upstream split (several seeds),
# speaker-held-out single digits and digit strings over all six folds (location-aware and
# additive attention), and the real-time factor of transcription on one thread. Every run
# selects best/ on its validation set (data.valid_reps repetitions of the training speakers) and
# is scored once on its test set with `engram speech eval`.
#
# Usage: bench/speech_fsdd.sh [digits] [folds] [strings] [rtf] [ensemble] [cv] [speaker]   (default: the first five)
# ensemble: ENSEMBLE_SEEDS single-digit runs of each recipe (validated: best/ on the validation
# set; all: the 2,700 non-test recordings, no validation, last/), each scored alone and all of a
# recipe as one ensemble (`speech eval --ensemble`, probabilities averaged) on the test set.
# cv: the single-digit recipe (the shipped config with SETS) cross-validated on three folds of the
# training repetitions (validation = repetitions 5-9, 20-24, 35-39: data.valid_offset 0, 15, 30;
# seeds 1, 2, 3), each fold's last/ scored on its own validation set; the test set is not used.
# speaker: the held-out-speaker recipes as shipped, ENSEMBLE_SEEDS seeds of every fold:
# configs/fsdd-digits-speaker.yaml, then configs/fsdd-strings-speaker.yaml fine-tuned from that
# run's best/; each run scored alone and each fold's runs as one ensemble (the digit-string target
# of bench/results_speech.md, 2026-12-04). About 50 minutes on two cores.
# Environment (all optional):
#   BUILD=dir     build directory holding engram (default build)
#   RUNS=dir      where the run directories go (default runs/speech-bench)
#   SEEDS="1 2 3" seeds of the upstream-split rows
#   ENSEMBLE_SEEDS="1 2 3 4 5" seeds of the ensemble part's runs
#   JOBS=N        trainings at once (default 2), each on one thread
#   SETS="..."    extra --set flags for every run
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=${BUILD:-build}/engram
runs=${RUNS:-runs/speech-bench}
seeds=${SEEDS:-1 2 3}
jobs=${JOBS:-2}
ensemble_seeds=${ENSEMBLE_SEEDS:-1 2 3 4 5}
parts=${*:-digits folds strings rtf ensemble}
cv_offsets="0 15 30"
speakers="george jackson lucas nicolas theo yweweler"
[ -x "$bin" ] || { echo "speech_fsdd.sh: $bin missing (build it, or set BUILD)" >&2; exit 1; }
mkdir -p "$runs"
export OMP_NUM_THREADS=1

# train NAME CONFIG [--set ...]: trains runs/NAME afresh on one thread (log in NAME.log), then scores its
# best/ on the test set (NAME.eval; $eval_sub and $eval_split, when set, choose another checkpoint and set).
train() {
  local name=$1 cfg=$2
  shift 2
  rm -rf "${runs:?}/$name"
  # shellcheck disable=SC2086
  if nice "$bin" train "$cfg" --threads 1 --set "train.run_dir=$runs/$name" ${SETS:-} "$@" > "$runs/$name.log" 2>&1 &&
    nice "$bin" speech eval -m "$runs/$name${eval_sub:-}" --split "${eval_split:-test}" --threads 1 > "$runs/$name.eval" 2>&1; then
    :
  else
    echo "speech_fsdd.sh: $name failed; see $runs/$name.log" >&2
    return 1
  fi
}
# Runs the queued "NAME CONFIG ARGS..." lines, $jobs at a time.
queue=()
flush() {
  local running=0 line
  for line in "${queue[@]}"; do
    # shellcheck disable=SC2086
    train $line &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
  done
  wait
  queue=()
}
acc() { grep -o 'sequence accuracy [0-9.]*' "$runs/$1.eval" | awk '{print $3}'; }
der() { grep -o 'digit error rate  [0-9.]*' "$runs/$1.eval" | awk '{print $4}'; }
secs() { grep -o 'done: [0-9]* steps in [0-9.]* s' "$runs/$1.log" | awk '{print $5}'; }
mean() { awk '{s += $1; ss += $1 * $1; n++} END {m = s / n; v = n > 1 ? (ss - n * m * m) / (n - 1) : 0;
  printf "%.2f ± %.2f", m, sqrt(v > 0 ? v : 0)}'; }

echo "engram speech benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'); load before: $(cut -d' ' -f1-3 /proc/loadavg)"

if [[ " $parts " == *" digits "* ]]; then
  for s in $seeds; do queue+=("digits-s$s configs/fsdd-digits.yaml --set train.seed=$s"); done
  flush
  echo
  echo "## single digits, upstream split (test: repetitions 0-4, 300 recordings; greedy)"
  echo "| seed | test accuracy % | digit error % | training s |"
  echo "|---|---:|---:|---:|"
  for s in $seeds; do echo "| $s | $(acc digits-s$s) | $(der digits-s$s) | $(secs digits-s$s) |"; done
  echo "| mean ± sd | $(for s in $seeds; do acc digits-s$s; done | mean) | | |"
fi

if [[ " $parts " == *" folds "* ]]; then
  for sp in $speakers; do queue+=("fold-$sp configs/fsdd-digits.yaml --set data.test_speaker=$sp"); done
  flush
  echo
  echo "## single digits, one speaker held out (test: all 500 recordings of the speaker; greedy)"
  echo "| held-out speaker | test accuracy % | training s |"
  echo "|---|---:|---:|"
  for sp in $speakers; do echo "| $sp | $(acc fold-$sp) | $(secs fold-$sp) |"; done
  echo "| mean ± sd | $(for sp in $speakers; do acc fold-$sp; done | mean) | |"
fi

if [[ " $parts " == *" strings "* ]]; then
  for sp in $speakers; do
    queue+=("strings-loc-$sp configs/fsdd-strings.yaml --set data.test_speaker=$sp")
    queue+=("strings-add-$sp configs/fsdd-strings.yaml --set data.test_speaker=$sp --set speech.attention=additive")
  done
  flush
  echo
  echo "## digit strings (1-7 digits), one speaker held out (300 test strings of the speaker; greedy)"
  echo "| held-out speaker | location: digit error % | exact % | additive: digit error % | exact % |"
  echo "|---|---:|---:|---:|---:|"
  for sp in $speakers; do
    echo "| $sp | $(der strings-loc-$sp) | $(acc strings-loc-$sp) | $(der strings-add-$sp) | $(acc strings-add-$sp) |"
  done
  echo "| mean ± sd | $(for sp in $speakers; do der strings-loc-$sp; done | mean) | | $(for sp in $speakers; do der strings-add-$sp; done | mean) | |"
fi

if [[ " $parts " == *" rtf "* ]]; then
  model=$runs/digits-s${seeds%% *}
  [ -d "$model" ] || train "digits-s${seeds%% *}" configs/fsdd-digits.yaml --set "train.seed=${seeds%% *}"
  strings=$runs/strings-loc-theo
  [ -d "$strings" ] || train strings-loc-theo configs/fsdd-strings.yaml --set data.test_speaker=theo
  echo
  echo "## real-time factor, one thread (reading the WAV files + features + greedy decoding)"
  echo "single digits: the 2,400 training recordings; strings: the 300 test strings"
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  for b in 1 16 64; do
    echo "$model, --batch $b: $("$bin" speech eval -m "$model" --split train --threads 1 --batch "$b" | grep '^time')"
  done
  for b in 1 16 64; do
    echo "$strings, --batch $b: $("$bin" speech eval -m "$strings" --split test --threads 1 --batch "$b" | grep '^time')"
  done
fi

if [[ " $parts " == *" ensemble "* ]]; then
  for s in $ensemble_seeds; do
    queue+=("ens-valid-s$s configs/fsdd-digits.yaml --set train.seed=$s")
    queue+=("ens-all-s$s configs/fsdd-digits.yaml --set train.seed=$s --set data.valid_reps=0")
  done
  flush
  echo
  echo "## single digits, upstream split: ensembles (test: repetitions 0-4, 300 recordings; greedy)"
  echo "validated: best/ chosen on the validation set; all: trained on the 2,700 non-test recordings, last/"
  echo "| recipe | each seed's test accuracy % (seeds $ensemble_seeds) | mean ± sd | ensemble of all: test accuracy % | ensemble: validation accuracy % |"
  echo "|---|---|---:|---:|---:|"
  for recipe in valid all; do
    sub=""
    [ "$recipe" = all ] && sub=/last
    members=()
    each=()
    for s in $ensemble_seeds; do
      [ -n "$sub" ] && "$bin" speech eval -m "$runs/ens-$recipe-s$s$sub" --split test --threads 1 > "$runs/ens-$recipe-s$s.eval"
      each+=("$(acc "ens-$recipe-s$s")")
      [ "$s" = "${ensemble_seeds%% *}" ] || members+=(--ensemble "$runs/ens-$recipe-s$s$sub")
    done
    first=$runs/ens-$recipe-s${ensemble_seeds%% *}$sub
    "$bin" speech eval -m "$first" "${members[@]}" --split test --threads 1 > "$runs/ens-$recipe.eval"
    valid=-
    if [ "$recipe" = valid ]; then
      "$bin" speech eval -m "$first" "${members[@]}" --split valid --threads 1 > "$runs/ens-$recipe.valid.eval"
      valid=$(acc "ens-$recipe.valid")
    fi
    echo "| $recipe | ${each[*]} | $(printf '%s\n' "${each[@]}" | mean) | $(acc "ens-$recipe") | $valid |"
  done
fi

if [[ " $parts " == *" cv "* ]]; then
  seed=0
  for off in $cv_offsets; do
    seed=$((seed + 1))
    queue+=("cv-o$off configs/fsdd-digits.yaml --set data.valid_offset=$off --set train.seed=$seed")
  done
  eval_sub=/last eval_split=valid
  flush
  unset eval_sub eval_split
  echo
  echo "## single digits, cross-validation on the training repetitions (last/ on each fold's validation set; SETS: ${SETS:-none})"
  echo "| validation repetitions | seed | errors / 300 | accuracy % | training s |"
  echo "|---|---:|---:|---:|---:|"
  seed=0
  total=0
  for off in $cv_offsets; do
    seed=$((seed + 1))
    errors=$(grep -o 'sequence accuracy [0-9.]*% ([0-9]* / [0-9]*' "$runs/cv-o$off.eval" | awk -F'[(/ ]+' '{print $NF - $(NF-1)}')
    total=$((total + errors))
    echo "| $((5 + off))-$((9 + off)) | $seed | $errors | $(acc "cv-o$off") | $(secs "cv-o$off") |"
  done
  echo "| all three | | $total / 900 | | |"
fi

if [[ " $parts " == *" speaker "* ]]; then
  for s in $ensemble_seeds; do
    for sp in $speakers; do
      queue+=("spk-digits-s$s-$sp configs/fsdd-digits-speaker.yaml --set data.test_speaker=$sp --set train.seed=$s")
    done
  done
  flush
  for s in $ensemble_seeds; do
    for sp in $speakers; do
      queue+=("spk-strings-s$s-$sp configs/fsdd-strings-speaker.yaml --set data.test_speaker=$sp --set train.seed=$s \
--set train.init_from=$runs/spk-digits-s$s-$sp/best")
    done
  done
  flush
  for kind in digits strings; do
    for sp in $speakers; do
      members=()
      for s in $ensemble_seeds; do
        [ "$s" = "${ensemble_seeds%% *}" ] || members+=(--ensemble "$runs/spk-$kind-s$s-$sp")
      done
      "$bin" speech eval -m "$runs/spk-$kind-s${ensemble_seeds%% *}-$sp" "${members[@]}" --threads 1 > "$runs/spk-$kind-ens-$sp.eval"
    done
    metric=acc
    [ "$kind" = strings ] && metric=der
    echo
    echo "## held-out speakers, $kind (configs/fsdd-$kind-speaker.yaml; test: the held-out speaker's $([ "$kind" = digits ] && echo 500 recordings || echo 300 strings); greedy; $([ "$kind" = digits ] && echo 'accuracy %' || echo 'digit error %'))"
    echo "| seed | ${speakers// / | } | mean ± sd over the folds |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
    for s in $ensemble_seeds ens; do
      row=()
      for sp in $speakers; do
        name=spk-$kind-s$s-$sp
        [ "$s" = ens ] && name=spk-$kind-ens-$sp
        row+=("$($metric "$name")")
      done
      label=$s
      [ "$s" = ens ] && label="$ensemble_seeds as one ensemble"
      echo "| $label | $(printf '%s | ' "${row[@]}")$(printf '%s\n' "${row[@]}" | mean) |"
    done
  done
fi
