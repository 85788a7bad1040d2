#!/usr/bin/env bash
# Fault tests of `engram train` for every family (hardening issue): a run killed with SIGKILL at
# random moments (a bounded number of times) and resumed each time ends with exactly the same
# model.safetensors as an uninterrupted run; a full disk (a file-size limit) during a checkpoint
# is a one-line error and the previous checkpoint still loads. Tiny configs, one thread, seconds.
# usage: fault_test.sh ENGRAM_BINARY SOURCE_DIR
set -u
bin=$1 src=$2
data=${ENGRAM_DATA_DIR-$src/../shared/data}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=1
fails=0 checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# family name, config, then --set overrides making the run a few seconds long with frequent checkpoints
runs=(
  "ntm|configs/ntm-copy.yaml|--set ntm.task.bits=3 --set ntm.task.max_len=4 --set ntm.ntm.controller_size=8 --set ntm.ntm.memory_slots=8 --set ntm.ntm.memory_width=4 --set data.valid_sequences=4 --set data.batches_per_epoch=50 --set train.max_steps=3000 --set train.checkpoint_every=50"
  "seq2seq|configs/dates.yaml|--set data.generate_train=400 --set data.generate_valid=20 --set data.bleu_sentences=20 --set seq2seq.hidden=16 --set seq2seq.embed_dim=8 --set seq2seq.attn_dim=8 --set train.max_minutes=0 --set train.max_epochs=0 --set train.max_steps=400 --set train.valid_every=100 --set train.checkpoint_every=10"
  "memn2n|configs/babi-1k-pertask.yaml|--set data.dir=$data/babi/en --set data.tasks=1 --set memn2n.dim=8 --set task.seeds=[1] --set task.linear_start.max_epochs=4 --set train.max_epochs=8 --set train.checkpoint_every=7"
  "pointer|configs/pointer-sort.yaml|--set pointer.hidden=16 --set pointer.embed_dim=8 --set data.min_n=4 --set data.max_n=5 --set data.batch_size=16 --set data.batches_per_epoch=20 --set data.valid_instances=20 --set train.max_epochs=0 --set train.max_steps=1500 --set train.patience=0 --set train.checkpoint_every=10"
  "tree|configs/sst-rnn-fine.yaml|--set data.dir=$data/sst --set tree.embed=8 --set tree.hidden=8 --set train.max_epochs=0 --set train.max_steps=600 --set train.checkpoint_every=5 --set data.batch_size=5"
  "pointer_generator|configs/pointer-generator-names.yaml|--set data.generate_train=400 --set data.generate_valid=20 --set data.rouge_pairs=20 --set data.max_sentences=8 --set pointer_generator.embed_dim=8 --set pointer_generator.hidden=16 --set pointer_generator.coverage=true --set task.pre_coverage_epochs=3 --set task.pre_coverage_lr=0.01 --set train.max_epochs=3 --set train.checkpoint_every=5"
)

for entry in "${runs[@]}"; do
  IFS='|' read -r family config sets <<< "$entry"
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  "$bin" train "$src/$config" $sets --threads 1 --set train.run_dir="$tmp/$family-full" > "$tmp/$family-full.log" 2>&1 ||
    { fail "$family: uninterrupted run failed"; tail -3 "$tmp/$family-full.log"; continue; }
  full_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  model=$tmp/$family-full/last/model.safetensors
  [ "$family" = memn2n ] && model=$tmp/$family-full/task-1/seed-1/last/model.safetensors
  # Killed runs: SIGKILL at a random moment (the first within the first half of the uninterrupted
  # run's time, later ones anywhere in it), resumed with the same command until one finishes.
  # A run faster than its uninterrupted twin (the machine's load changes) may end before the first
  # kill: it starts again from scratch with half the time, up to six times.
  dir=$tmp/$family-killed kills=0 done=0
  for trial in 1 2 3 4 5 6; do
    rm -rf "$dir"
    kills=0 done=0
    for attempt in $(seq 1 200); do
      # shellcheck disable=SC2086
      "$bin" train "$src/$config" $sets --threads 1 --set train.run_dir="$dir" > "$tmp/$family-killed.log" 2>&1 &
      pid=$!
      span=$(( attempt == 1 ? full_ms / 2 : full_ms ))
      delay_ms=$(( 5 + RANDOM % (span > 5 ? span : 5) ))
      sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
      kill -KILL "$pid" 2> /dev/null
      wait "$pid" 2> /dev/null
      rc=$?
      if [ $rc -eq 0 ]; then done=1; break; fi
      [ $rc -eq 137 ] || { fail "$family: killed run exited $rc"; tail -3 "$tmp/$family-killed.log"; break 2; }
      kills=$((kills + 1))
    done
    [ $done -eq 1 ] && [ $kills -eq 0 ] && { full_ms=$((full_ms / 2)); continue; }
    break
  done
  checks=$((checks + 1))
  if [ $done -ne 1 ]; then
    fail "$family: did not finish after $kills kills"
  elif [ $kills -eq 0 ]; then
    fail "$family: finished before any kill (make the run longer)"
  else
    killed_model=$dir/last/model.safetensors
    [ "$family" = memn2n ] && killed_model=$dir/task-1/seed-1/last/model.safetensors
    if [ -n "${ENGRAM_SANITIZED:-}" ]; then
      # Under ASan two uninterrupted runs already differ in the last float bits (the sanitizer's
      # allocator changes addresses, and with them a summation order somewhere): only check the
      # resumed run finished with a model.
      [ -s "$killed_model" ] || fail "$family: after $kills kills there is no model"
      echo "$family: $kills kills, resumed to a finished model (sanitizer build: bytes not compared)"
    else
      cmp -s "$model" "$killed_model" || fail "$family: after $kills kills the model differs from the uninterrupted one"
      echo "$family: $kills kills, resumed to the same model"
    fi
  fi
done

# A full disk during a checkpoint: a 64 KiB file-size limit makes the model file's write fail.
checks=$((checks + 1))
ntm_sets="--set ntm.task.bits=3 --set ntm.task.max_len=4 --set ntm.ntm.controller_size=8 --set ntm.ntm.memory_slots=8 --set ntm.ntm.memory_width=4 --set data.valid_sequences=4 --set data.batches_per_epoch=50"
# shellcheck disable=SC2086
"$bin" train "$src/configs/ntm-copy.yaml" $ntm_sets --set train.max_steps=20 --set train.run_dir="$tmp/disk" > /dev/null 2>&1
# shellcheck disable=SC2086
( trap '' XFSZ; ulimit -f 16; exec "$bin" train "$src/configs/ntm-copy.yaml" $ntm_sets --set train.max_steps=40 \
    --set ntm.ntm.controller_size=64 --set train.run_dir="$tmp/disk2" ) > "$tmp/disk.out" 2> "$tmp/disk.err"
rc=$?
if [ $rc -ne 1 ] || ! grep -q "^engram: error: .*\(cannot write\|File too large\)" "$tmp/disk.err"; then
  fail "full disk: exit $rc, stderr: $(head -2 "$tmp/disk.err")"
fi
checks=$((checks + 1))
ls "$tmp/disk2" | grep -q "tmp-" && fail "full disk: a temporary checkpoint directory was left behind"
"$bin" ntm eval -m "$tmp/disk" --lengths 3 --sequences 4 > /dev/null 2>&1 || fail "the checkpoint before the full disk does not load"

# A read-only run directory (as an unprivileged user: root writes anywhere): training into it is a
# one-line error; a model in it still loads and evaluates.
if command -v setpriv > /dev/null && [ "$(id -u)" -eq 0 ]; then
  ro=$tmp/readonly
  mkdir -p "$ro" && cp -r "$tmp/disk/last" "$ro/model" && chmod -R a+rX "$tmp" && chmod 755 "$ro"
  as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  checks=$((checks + 1))
  # shellcheck disable=SC2086
  "${as_nobody[@]}" "$bin" train "$src/configs/ntm-copy.yaml" $ntm_sets --set train.max_steps=10 \
    --set train.run_dir="$ro" > /dev/null 2> "$tmp/ro.err"
  rc=$?
  { [ $rc -eq 1 ] && [ "$(wc -l < "$tmp/ro.err")" -eq 1 ] && grep -q "^engram: error: cannot open .*Permission denied" "$tmp/ro.err"; } ||
    fail "read-only run directory: exit $rc, stderr: $(head -2 "$tmp/ro.err")"
  checks=$((checks + 1))
  "${as_nobody[@]}" "$bin" ntm eval -m "$ro/model" --lengths 3 --sequences 4 > /dev/null 2>&1 ||
    fail "a model in a read-only directory does not load"
else
  echo "*** read-only run directory check not run: needs root and setpriv to act as an unprivileged user ***"
fi

echo "fault_test: $((checks - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
