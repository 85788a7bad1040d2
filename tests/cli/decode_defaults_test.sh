#!/usr/bin/env bash
# A model's own decode defaults (docs/models.md, `decode:`): a run config's decode: section is
# saved as RUN/decode.yaml; every front end decodes that run's model as if the section's flags
# were given, an explicit flag overrides one, and a bad section is a one-line error (exit 1).
# Runs against the tiny committed seq2seq model of tests/golden/models/.
# usage: decode_defaults_test.sh ENGRAM_BINARY SOURCE_DIR
set -u
bin=$1 src=$2
golden=$src/tests/golden/models/seq2seq
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
check() { checks=$((checks + 1)); }

printf '29 November 2026\nNov 29, 2026\n29/11/2026\n' > "$tmp/in"
# A run directory (train.yaml beside the model) whose decode: section asks for beam 3 and alpha 0.6.
mkdir -p "$tmp/run" && cp -r "$golden" "$tmp/run/best" && touch "$tmp/run/train.yaml"
printf 'beam: 3\nalpha: 0.6\n' > "$tmp/run/decode.yaml"
scores() { "$bin" translate --scores "$@" < "$tmp/in" 2> "$tmp/err"; }

# As if the flags were given: same translations and the same length-normalised scores.
check
[ "$(scores -m "$tmp/run")" = "$(scores -m "$golden" --beam 3 --alpha 0.6)" ] || fail "the run's defaults are not --beam 3 --alpha 0.6"
check
[ "$(scores -m "$golden" --beam 3 --alpha 0.6)" != "$(scores -m "$golden")" ] || fail "--alpha 0.6 changes no score: the check above proves nothing"
# An explicit flag overrides the model's default (alpha 0 given, beam 3 still the model's).
check
[ "$(scores -m "$tmp/run" --alpha 0)" = "$(scores -m "$golden" --beam 3)" ] || fail "--alpha 0 did not override the run's alpha"
check
[ "$(scores -m "$tmp/run/best" --beam 1 --alpha 0)" = "$(scores -m "$golden")" ] || fail "RUN/best did not read RUN/decode.yaml, or --beam 1 did not override"
# engram run decodes a run's model with the run's defaults: RUN's decode.yaml says min_length N, and
# `engram run -m RUN` writes what `VERB -m MODEL --min-length N` writes, which differs from what
# `engram run -m MODEL` writes (else the first check proves nothing).
run_uses_defaults() {  # RUN MODEL INPUT VERB N
  local run=$1 model=$2 input=$3 verb=$4 n=$5 flagged
  printf 'min_length: %s\n' "$n" > "$run/decode.yaml"
  flagged=$("$bin" "$verb" -m "$model" --min-length "$n" < "$input")
  check
  [ "$("$bin" run -m "$run" < "$input")" = "$flagged" ] || fail "engram run ignores $run's decode defaults ($verb)"
  check
  [ "$flagged" != "$("$bin" run -m "$model" < "$input")" ] ||
    fail "min_length $n changes no $verb output: the check above proves nothing"
}
run_uses_defaults "$tmp/run" "$golden" "$tmp/in" translate 14  # min_length 14 changes the text of a date
# ... and so does the pointer-generator's run_line (min_length 6 changes its golden summaries).
pg=$src/tests/golden/models/pointer_generator
cut -f1 "$pg/cases.tsv" > "$tmp/articles"
mkdir -p "$tmp/pg" && cp -r "$pg" "$tmp/pg/best" && touch "$tmp/pg/train.yaml"
run_uses_defaults "$tmp/pg" "$pg" "$tmp/articles" summarize 6

# A bad section: an unknown key, a value out of range, an option the family does not honour.
bad() {
  printf '%s\n' "$1" > "$tmp/run/decode.yaml"
  check
  "$bin" translate -m "$tmp/run" < "$tmp/in" > /dev/null 2> "$tmp/err"
  local rc=$?
  [ "$rc" -eq 1 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -qE "^engram: error: .*$2" "$tmp/err" ||
    { fail "decode.yaml '$1': exit $rc"; sed 's/^/  stderr: /' "$tmp/err"; }
}
bad 'alfa: 0.6' "unknown config key 'decode.alfa'.*did you mean 'decode.alpha'"
bad 'alpha: 11' "decode.yaml: decode: search: alpha 11 must be in \[0, 10\]"
bad 'beam: three' "decode.beam"
bad 'views: 4' "decode.views is not an option of the seq2seq family"

# engram train: the section (and --set decode.KEY=VALUE) is checked before training and saved.
check
"$bin" train "$src/configs/dates.yaml" --set decode.alpha=0.6 --dump-config > "$tmp/dump" 2> "$tmp/err" &&
  grep -qx 'decode:' "$tmp/dump" && grep -qx '  alpha: 0.6' "$tmp/dump" || fail "--dump-config without the decode section"
check
"$bin" train "$src/configs/dates.yaml" --dump-config 2> "$tmp/err" | grep -q '^decode' && fail "a decode section without one"
check
"$bin" train "$src/configs/dates.yaml" --set decode.alfa=1 --dump-config > /dev/null 2> "$tmp/err"
[ $? -eq 1 ] && grep -q "unknown config key 'decode.alfa'" "$tmp/err" || fail "train took decode.alfa"
tiny=(--set ntm.task.bits=2 --set ntm.task.max_len=3 --set ntm.ntm.controller_size=4 --set ntm.ntm.memory_slots=4
      --set ntm.ntm.memory_width=2 --set data.valid_sequences=2 --set data.batches_per_epoch=2 --threads 1)
check
"$bin" train "$src/configs/ntm-copy.yaml" "${tiny[@]}" --set train.max_steps=2 --set train.run_dir="$tmp/ntm" \
  --set decode.batch=8 > /dev/null 2> "$tmp/err" && [ "$(cat "$tmp/ntm/decode.yaml")" = "batch: 8" ] ||
  { fail "train did not save RUN/decode.yaml"; cat "$tmp/err"; }
check
"$bin" train "$src/configs/ntm-copy.yaml" "${tiny[@]}" --set train.max_steps=2 --set train.run_dir="$tmp/ntm2" > /dev/null 2>&1
[ -d "$tmp/ntm2/last" ] && [ ! -e "$tmp/ntm2/decode.yaml" ] || fail "a run without a decode section has RUN/decode.yaml"

# A verb whose one decode flag is --precision (sentiment eval) takes the model's precision too,
# and a typed --precision overrides it (the header line names non-fp32 weights).
data=${ENGRAM_DATA_DIR-$src/../shared/data}
if [ -n "$data" ] && [ -d "$data/sst" ]; then
  export ENGRAM_DATA_DIR=$data
  mkdir -p "$tmp/tree" && cp -r "$src/tests/golden/models/tree" "$tmp/tree/best" && touch "$tmp/tree/train.yaml"
  printf 'precision: bf16\n' > "$tmp/tree/decode.yaml"
  check
  "$bin" sentiment eval -m "$tmp/tree" --split test 2> "$tmp/err" | head -n 1 | grep -q ', bf16 weights' ||
    { fail "sentiment eval ignored the model's precision: bf16"; cat "$tmp/err"; }
  check
  "$bin" sentiment eval -m "$tmp/tree" --split test --precision fp32 2> "$tmp/err" | head -n 1 | grep -q 'weights' &&
    fail "--precision fp32 did not override the model's bf16"
else
  echo "SKIPPED: the sentiment precision checks (no SST under ENGRAM_DATA_DIR='$data')"
fi

echo "decode_defaults_test: $((checks - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
