#!/usr/bin/env bash
# The engram binary's error contract (docs/limits.md): one style, `engram: error: ...` on one line
# of stderr, exit 1 for bad input and failed writes (standard output included), exit 2 for a bad
# command line, 0 for --help. Runs against the tiny committed models of tests/golden/models/.
# usage: exit_codes_test.sh ENGRAM_BINARY SOURCE_DIR
set -u
bin=$1 src=$2
golden=$src/tests/golden/models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 checks=0

# expect RC PATTERN -- command...: exit code RC, and (when PATTERN is not empty) stderr's one line
# matches "engram: error: .*PATTERN".
expect() {
  local rc=$1 pattern=$2
  shift 3
  checks=$((checks + 1))
  "$@" > "$tmp/out" 2> "$tmp/err" < "${stdin:-/dev/null}"
  local got=$?
  local lines
  lines=$(wc -l < "$tmp/err")
  if [ "$got" -ne "$rc" ]; then
    echo "FAIL: exit $got, expected $rc: $*"; sed 's/^/  stderr: /' "$tmp/err"; fails=$((fails + 1)); return
  fi
  if [ -n "$pattern" ] && { [ "$lines" -ne 1 ] || ! grep -qE "^engram: error: .*$pattern" "$tmp/err"; }; then
    echo "FAIL: expected one line 'engram: error: ...$pattern': $*"; sed 's/^/  stderr: /' "$tmp/err"
    fails=$((fails + 1))
  fi
}

expect 0 "" -- "$bin" --help
expect 0 "" -- "$bin" translate --help
expect 2 "subcommand is required" -- "$bin" --bogus
expect 2 "not expected: --bogus" -- "$bin" translate -m "$golden/seq2seq" --bogus
expect 2 "model is required" -- "$bin" translate
expect 2 "--beam: .*expected an integer, got 'two'" -- "$bin" translate -m "$golden/seq2seq" --beam two
expect 2 "length" -- "$bin" ntm show -m "$golden/ntm" --length 100000
expect 2 "beam 0 must be in" -- "$bin" translate -m "$golden/seq2seq" --beam 0
expect 2 "alpha nan" -- "$bin" translate -m "$golden/seq2seq" --alpha nan
expect 2 "min_length -1 must be in" -- "$bin" translate -m "$golden/seq2seq" --min-length -1
expect 2 "block_ngram_repeat 2000 must be in" -- "$bin" translate -m "$golden/seq2seq" --block-ngram-repeat 2000
expect 2 "coverage_penalty 11 must be in" -- "$bin" translate -m "$golden/seq2seq" --coverage-penalty 11
expect 2 "--min-length: .*expected an integer" -- "$bin" translate -m "$golden/seq2seq" --min-length three
expect 1 "neither a model directory" -- "$bin" translate -m "$tmp/missing"
expect 1 "ntm.*takes seq2seq" -- "$bin" translate -m "$golden/ntm"
expect 1 "bogus" -- "$bin" train "$src/configs/dates.yaml" --set train.bogus=1 --dump-config
# --threads is bounded alike on every verb, train included; an integer that must be >= 0 names
# its range in integers.
expect 2 "Value 0 not in range 1 to 256" -- "$bin" train "$src/configs/dates.yaml" --threads 0 --dump-config
expect 2 "Value 300 not in range 1 to 256" -- "$bin" train "$src/configs/dates.yaml" --threads 300 --dump-config
expect 2 "seed: Value -1 not in range 0 to 9223372036854775807 " -- "$bin" ntm eval -m "$golden/ntm" --seed -1
printf 'model:\n  architecture: ntm\ntrainer: {}\n' > "$tmp/old.yaml"
expect 1 "one config shape" -- "$bin" train "$tmp/old.yaml"

# A full device: the translation that cannot be written is an error, not a success.
printf '29 November 2026\n' > "$tmp/in"
stdin=$tmp/in expect 1 "cannot write to standard output" -- sh -c "exec \"$bin\" translate -m \"$golden/seq2seq\" > /dev/full"
stdin=$tmp/in expect 0 "" -- "$bin" translate -m "$golden/seq2seq"
[ "$(cat "$tmp/out")" = "2026-11-29" ] || { echo "FAIL: translation '$(cat "$tmp/out")'"; fails=$((fails + 1)); }
# The decoding flags reach the search (the model reads and writes characters): with
# --block-ngram-repeat 1 no character appears twice, with --min-length 14 at least 14 come out.
stdin=$tmp/in expect 0 "" -- "$bin" translate -m "$golden/seq2seq" --beam 3 --block-ngram-repeat 1 --coverage-penalty 0.2
[ -s "$tmp/out" ] && [ -z "$(head -n 1 "$tmp/out" | grep -o . | sort | uniq -d)" ] ||
  { echo "FAIL: --block-ngram-repeat 1 gave '$(cat "$tmp/out")'"; fails=$((fails + 1)); }
stdin=$tmp/in expect 0 "" -- "$bin" translate -m "$golden/seq2seq" --min-length 14
[ "$(head -n 1 "$tmp/out" | tr -d '\n' | wc -m)" -ge 14 ] ||
  { echo "FAIL: --min-length 14 gave '$(cat "$tmp/out")'"; fails=$((fails + 1)); }
expect 1 "cannot write to standard output" -- sh -c "exec \"$bin\" train \"$src/configs/dates.yaml\" --dump-config > /dev/full"

# engram shortlist and translate --shortlist: a model without one says so; one built from the
# golden pairs sits beside a copy of the model and decodes the recorded output; the corpus's two
# sides must have as many lines.
expect 1 "no shortlist.tsv" -- "$bin" translate -m "$golden/seq2seq" --shortlist
cut -f1 "$golden/seq2seq/cases.tsv" > "$tmp/sl.src"
cut -f2 "$golden/seq2seq/cases.tsv" > "$tmp/sl.tgt"
cp -r "$golden/seq2seq" "$tmp/s2s"
expect 0 "" -- "$bin" shortlist -m "$tmp/s2s" --src "$tmp/sl.src" --tgt "$tmp/sl.tgt" --frequent 0 --best 1000
[ "$(head -n 1 "$tmp/s2s/shortlist.tsv")" = "engram-shortlist 1" ] || { echo "FAIL: no shortlist written"; fails=$((fails + 1)); }
stdin=$tmp/in expect 0 "" -- "$bin" translate -m "$tmp/s2s" --shortlist
[ "$(cat "$tmp/out")" = "2026-11-29" ] || { echo "FAIL: --shortlist translation '$(cat "$tmp/out")'"; fails=$((fails + 1)); }
head -n 2 "$tmp/sl.tgt" > "$tmp/sl.short"
expect 1 "has [0-9]+ lines, .* has 2" -- "$bin" shortlist -m "$tmp/s2s" --src "$tmp/sl.src" --tgt "$tmp/sl.short" -o "$tmp/x.tsv"
printf 'engram-shortlist 1\n*\tNOPE\n' > "$tmp/s2s/shortlist.tsv"
expect 1 "shortlist.tsv:2: target token 'NOPE'" -- "$bin" translate -m "$tmp/s2s"

# engram rouge: mismatched files, a missing file, a missing argument, a full standard output.
printf 'The cats ran.\\nA dog.\nx\n' > "$tmp/hyp"
printf 'A cat runs.\ny\n' > "$tmp/ref"
expect 0 "" -- "$bin" rouge --stem "$tmp/hyp" "$tmp/ref"
# ROUGE-Lsum by hand: line 1 [a cat run] vs [the cat ran] + [a dog]: union {a, cat}, P 2/5, R 2/3; line 2: 0.
checks=$((checks + 1))
grep -q '^ROUGE-Lsum|nrefs:1|stem:yes = 25.0 (P = 20.0 R = 33.3)$' "$tmp/out" || { echo "FAIL: rouge output"; fails=$((fails + 1)); }
expect 1 "has 2 lines but .* has 1 line" -- "$bin" rouge "$tmp/hyp" "$tmp/in"
expect 1 "cannot open" -- "$bin" rouge "$tmp/hyp" "$tmp/missing"
expect 2 "ref is required" -- "$bin" rouge "$tmp/hyp"
expect 1 "cannot write to standard output" -- sh -c "exec \"$bin\" rouge \"$tmp/hyp\" \"$tmp/ref\" > /dev/full"

# An input line over the 64 KiB limit, and a stream with no newline at all: one error, bounded memory.
head -c 70000 /dev/zero | tr '\0' 'a' > "$tmp/long"
stdin=$tmp/long expect 1 "longer than 65536 bytes" -- "$bin" translate -m "$golden/seq2seq"
# A target prefix for an empty source: refused, not dropped with the empty sentence's empty output.
printf 'ab\ta\n\ta\n' > "$tmp/empty-src"
stdin=$tmp/empty-src expect 1 "input 2 is empty, so its target prefix" -- "$bin" translate -m "$golden/seq2seq" --prefix-column

# Run directories: a copied run resumes as the copy (not into the original), a finished run run
# again does nothing, and a second training on a directory in use is refused.
tiny=(--set ntm.task.bits=2 --set ntm.task.max_len=3 --set ntm.ntm.controller_size=4 --set ntm.ntm.memory_slots=4
      --set ntm.ntm.memory_width=2 --set data.valid_sequences=2 --set data.batches_per_epoch=10
      --set train.log_every=5 --threads 1)
expect 0 "" -- "$bin" train "$src/configs/ntm-copy.yaml" "${tiny[@]}" --set train.max_steps=20 --set train.run_dir="$tmp/A"
cp -r "$tmp/A" "$tmp/B"
expect 0 "" -- "$bin" train "$tmp/B" --set train.max_steps=40
step_of() { sed -n 's/.*"step": *\([0-9]*\).*/\1/p' "$1/last/trainer.json" | head -1; }
checks=$((checks + 1))
[ "$(step_of "$tmp/A")" = 20 ] && [ "$(step_of "$tmp/B")" = 40 ] ||
  { echo "FAIL: copy resumed into A (A at $(step_of "$tmp/A"), B at $(step_of "$tmp/B"))"; fails=$((fails + 1)); }
expect 0 "" -- "$bin" train "$tmp/B" --set train.max_steps=40
checks=$((checks + 1))
grep -q "nothing to do" "$tmp/out" || { echo "FAIL: a finished run trained again"; fails=$((fails + 1)); }
exec 9> "$tmp/B/.lock"; flock 9; echo $$ >&9
expect 1 "in use by another engram process" -- "$bin" train "$tmp/B" --set train.max_steps=60
exec 9>&-

# The pointer-generator's verbs.
pg=$golden/pointer_generator
printf 'reports say Zisi won the race in Seritof today\n' > "$tmp/article"
stdin=$tmp/article expect 0 "" -- "$bin" summarize -m "$pg"
checks=$((checks + 1))
grep -qx "Zisi won in Seritof" "$tmp/out" || { echo "FAIL: summarize wrote '$(cat "$tmp/out")'"; fails=$((fails + 1)); }
stdin=$tmp/article expect 1 "cannot write to standard output" -- sh -c "exec \"$bin\" summarize -m \"$pg\" > /dev/full"
expect 2 "min_length -1 must be in" -- "$bin" summarize -m "$pg" --min-length -1
expect 2 "not in range" -- "$bin" summarize -m "$pg" --oov-bonus 200
stdin=$tmp/article expect 1 "oov_bonus nan outside" -- "$bin" summarize -m "$pg" --oov-bonus nan
stdin=$tmp/article expect 0 "" -- "$bin" summarize -m "$pg" --oov-bonus 2
grep -qx "Zisi won in Seritof" "$tmp/out" || { echo "FAIL: summarize --oov-bonus 2 wrote '$(cat "$tmp/out")'"; fails=$((fails + 1)); }
printf '\tZisi\n' > "$tmp/empty-article"
stdin=$tmp/empty-article expect 1 "input 1 is empty, so its target prefix" -- "$bin" summarize -m "$pg" --prefix-column
expect 1 "missing.tsv" -- "$bin" pointer-generator eval -m "$pg" --file "$tmp/missing.tsv"
printf 'an article without a tab\n' > "$tmp/bad.tsv"
expect 1 "bad.tsv:1: expected 'source<TAB>target'" -- "$bin" pointer-generator eval -m "$pg" --file "$tmp/bad.tsv"
expect 1 "the article is empty" -- "$bin" pointer-generator show -m "$pg" "  " -o "$tmp/s.svg"
expect 1 "give exactly one of --file and --bbc" -- "$bin" pointer-generator eval -m "$pg"
expect 1 "not trained on BBC" -- "$bin" pointer-generator eval -m "$pg" --bbc test
expect 2 "" -- "$bin" pointer-generator eval -m "$pg" --bbc train
expect 1 "nowhere" -- "$bin" pointer-generator eval -m "$pg" --bbc test --task headline --bbc-dir "$tmp/nowhere"
expect 1 "holds a 'seq2seq' model" -- "$bin" summarize -m "$golden/seq2seq"
# --precision reaches the decoder: the attention picture's numbers move from fp32's.
for p in fp32 bf16 int8; do
  expect 0 "" -- "$bin" pointer-generator show -m "$pg" "reports say Zisi won the race in Seritof today" \
    --precision "$p" -o "$tmp/pg-$p.svg"
done
checks=$((checks + 1))
if cmp -s "$tmp/pg-fp32.svg" "$tmp/pg-bf16.svg" || cmp -s "$tmp/pg-fp32.svg" "$tmp/pg-int8.svg"; then
  echo "FAIL: pointer-generator show draws the same picture in fp32 and bf16 / int8"; fails=$((fails + 1))
fi
# An ensemble of the model with itself summarises as the model alone; a member of another family
# is refused by name.
stdin=$tmp/article expect 0 "" -- "$bin" summarize -m "$pg" --ensemble "$pg"
checks=$((checks + 1))
grep -qx "Zisi won in Seritof" "$tmp/out" || { echo "FAIL: summarize --ensemble wrote '$(cat "$tmp/out")'"; fails=$((fails + 1)); }
stdin=$tmp/article expect 1 "holds a 'pointer' model" -- "$bin" summarize -m "$pg" --ensemble "$golden/pointer"
sixteen=()
for _ in $(seq 16); do sixteen+=(--ensemble "$tmp/nowhere"); done
stdin=$tmp/article expect 1 "--ensemble: 17 models in one ensemble \(at most 16 with -m's\)" -- "$bin" summarize -m "$pg" "${sixteen[@]}"
expect 0 "" -- "$bin" pointer-generator show -m "$pg" "reports say Zisi won the race in Seritof today" -o "$tmp/s.svg"
checks=$((checks + 1))
grep -q "Zisi \[copied\]" "$tmp/s.svg" || { echo "FAIL: show drew no copied token"; fails=$((fails + 1)); }

# Pointer eval's sampling and view options.
expect 2 "samples -1 must be in \[0, 100000\]" -- "$bin" pointer eval -m "$golden/pointer" --samples -1
expect 2 "temperature 0 must be in \(0, 100\]" -- "$bin" pointer eval -m "$golden/pointer" --temperature 0
expect 2 "temperature nan must be in \(0, 100\]" -- "$bin" pointer eval -m "$golden/pointer" --temperature nan
expect 2 "views 65 must be in \[1, 64\]" -- "$bin" pointer eval -m "$golden/pointer" --views 65
expect 2 "not expected: 2 --views" -- "$bin" translate -m "$golden/seq2seq" --views 2
expect 2 "n_best 3 must be in \[1, beam = 2\]" -- "$bin" translate -m "$golden/seq2seq" --beam 2 --n-best 3
# --prefix-column: "source<TAB>target prefix", the prefix forced first (the golden dates model).
checks=$((checks + 1))
out=$(printf '29 November 2026\t2027\nNov 29, 2026\n' | "$bin" translate -m "$golden/seq2seq" --prefix-column --beam 2 | tr '\n' ' ')
[ "$out" = "2027-11-29 2026-11-29 " ] || { echo "FAIL: translate --prefix-column gave '$out'"; fails=$((fails + 1)); }
# --stream prints what translate prints, token by token (the golden model's cases).
checks=$((checks + 1))
cut -f1 "$golden/seq2seq/cases.tsv" > "$tmp/stream-in"
"$bin" translate -m "$golden/seq2seq" < "$tmp/stream-in" > "$tmp/plain-out"
"$bin" translate -m "$golden/seq2seq" --stream < "$tmp/stream-in" > "$tmp/stream-out"
cmp -s "$tmp/plain-out" "$tmp/stream-out" || { echo "FAIL: translate --stream differs from translate"; fails=$((fails + 1)); }
# summarize --stream prints what summarize prints; --prefix-column forces the prefix first.
checks=$((checks + 1))
cut -f1 "$golden/pointer_generator/cases.tsv" > "$tmp/pg-in"
"$bin" summarize -m "$golden/pointer_generator" < "$tmp/pg-in" > "$tmp/pg-plain"
"$bin" summarize -m "$golden/pointer_generator" --stream < "$tmp/pg-in" > "$tmp/pg-stream"
[ -s "$tmp/pg-plain" ] && cmp -s "$tmp/pg-plain" "$tmp/pg-stream" || { echo "FAIL: summarize --stream differs from summarize"; fails=$((fails + 1)); }
checks=$((checks + 1))
out=$(printf 'officials said the minister Kovaletu arrived in Bramido for talks\tBramido talks\n' | "$bin" summarize -m "$golden/pointer_generator" --prefix-column)
case "$out" in "Bramido talks"*) ;; *) echo "FAIL: summarize --prefix-column gave '$out'"; fails=$((fails + 1)) ;; esac
expect 2 "stream: tokens are streamed from greedy decoding or sampling, not from a beam" -- "$bin" translate -m "$golden/seq2seq" --stream --beam 2
expect 2 "sampling \(sampling_topk 5\) draws one output: beam and n_best must be 1" -- "$bin" translate -m "$golden/seq2seq" --sampling-topk 5 --beam 2
expect 2 "sampling_topp 1.5 must be in \(0, 1\]" -- "$bin" translate -m "$golden/seq2seq" --sampling-topk 0 --sampling-topp 1.5
# Sampling with a seed: the same seed gives the same output.
checks=$((checks + 1))
s1=$("$bin" translate -m "$golden/seq2seq" --sampling-topk 0 --temperature 2 --seed 7 < "$tmp/stream-in")
s2=$("$bin" translate -m "$golden/seq2seq" --sampling-topk 0 --temperature 2 --seed 7 < "$tmp/stream-in")
[ -n "$s1" ] && [ "$s1" = "$s2" ] || { echo "FAIL: sampling with one seed gave two outputs"; fails=$((fails + 1)); }
expect 1 "views are readings of 2-D points \(hull, tsp\), not of sorting" -- "$bin" pointer eval -m "$golden/pointer" --views 2

# --ensemble and --precision of `engram run` and of the pointer, memn2n, ntm and tree verbs: a model
# with itself answers as alone, in bf16 and int8 too; a member of another family and an unknown
# precision are refused in one line.
printf '0.5 0.1 0.9 0.3\n' > "$tmp/points"
for p in fp32 bf16 int8; do
  stdin=$tmp/points expect 0 "" -- "$bin" run -m "$golden/pointer" --ensemble "$golden/pointer" --precision $p
  checks=$((checks + 1))
  [ "$(cat "$tmp/out")" = "2 4 1 3" ] || { echo "FAIL: run --ensemble --precision $p gave '$(cat "$tmp/out")'"; fails=$((fails + 1)); }
done
stdin=$tmp/points expect 1 "golden/models/tree holds a 'tree' model and .*golden/models/pointer a 'pointer' model" -- \
  "$bin" run -m "$golden/pointer" --ensemble "$golden/tree"
# seq2seq and pointer_generator with themselves, in bf16 and int8: their golden outputs; translate
# --precision int8 too.
for p in bf16 int8; do
  checks=$((checks + 1))
  out=$(cut -f1 "$golden/seq2seq/cases.tsv" | "$bin" run -m "$golden/seq2seq" --ensemble "$golden/seq2seq" --precision $p)
  [ "$out" = "$(cut -f2 "$golden/seq2seq/cases.tsv")" ] || { echo "FAIL: seq2seq run --ensemble --precision $p gave '$out'"; fails=$((fails + 1)); }
  checks=$((checks + 1))
  out=$(cut -f1 "$golden/pointer_generator/cases.tsv" | "$bin" run -m "$golden/pointer_generator" --ensemble "$golden/pointer_generator" --precision $p)
  [ "$out" = "$(cut -f2 "$golden/pointer_generator/cases.tsv")" ] || { echo "FAIL: pointer_generator run --ensemble --precision $p gave '$out'"; fails=$((fails + 1)); }
done
checks=$((checks + 1))
out=$(cut -f1 "$golden/seq2seq/cases.tsv" | "$bin" translate -m "$golden/seq2seq" --precision int8)
[ "$out" = "$(cut -f2 "$golden/seq2seq/cases.tsv")" ] || { echo "FAIL: translate --precision int8 gave '$out'"; fails=$((fails + 1)); }
stdin=$tmp/points expect 1 "golden/models/pointer holds a 'pointer' model and .*golden/models/seq2seq a 'seq2seq' model" -- \
  "$bin" run -m "$golden/seq2seq" --ensemble "$golden/pointer"
expect 2 "--precision: .*'int4' is not one of fp32\|bf16\|int8" -- "$bin" run -m "$golden/tree" --precision int4
expect 0 "" -- "$bin" pointer eval -m "$golden/pointer" --n 5 --instances 20 --ensemble "$golden/pointer" --precision bf16
expect 0 "" -- "$bin" ntm eval -m "$golden/ntm" --lengths 5 --sequences 4 --ensemble "$golden/ntm" --precision bf16
expect 0 "" -- "$bin" ntm eval -m "$golden/ntm" --lengths 5 --sequences 4 --precision int8
expect 0 "" -- "$bin" sentiment show -m "$golden/tree" "It rocks" --precision int8 -o "$tmp/t8.svg"
expect 1 "holds a 'memn2n' model and .* a 'ntm' model" -- "$bin" ntm eval -m "$golden/ntm" --lengths 5 --ensemble "$golden/memn2n"
expect 1 "holds a 'pointer' model and .* a 'tree' model" -- "$bin" sentiment show -m "$golden/tree" "It rocks" \
  --ensemble "$golden/pointer" -o "$tmp/t.svg"
mkdir -p "$tmp/tree-of-tasks/task-1" && cp -r "$golden/memn2n" "$tmp/tree-of-tasks/task-1/model"
expect 1 "--ensemble: $tmp/nowhere has no task-1/model" -- "$bin" babi eval -m "$tmp/tree-of-tasks" --ensemble "$tmp/nowhere"

# Training and the task readers: a clear error, never an internal message or a score of nothing.
mkdir -p "$tmp/babi"
printf '1 Mary went home.\n2 Where is Mary?\n' > "$tmp/babi/qa1_single-supporting-fact_train.txt"
printf '1 Mary went home.\n2 John went out.\n' > "$tmp/babi/qa1_single-supporting-fact_test.txt"
expect 1 "qa1_single-supporting-fact_train.txt:2: a question without its answer" -- "$bin" babi eval -m "$golden/memn2n" --data "$tmp/babi"
printf '1 Mary moved to the bathroom.\n2 Where is Mary?\tbathroom\t1\n' > "$tmp/babi/qa1_single-supporting-fact_train.txt"
expect 1 "bAbI task 1: no test questions in" -- "$bin" babi eval -m "$golden/memn2n" --data "$tmp/babi"
expect 1 "memn2n: no validation questions: data.valid_fraction 0.1 of the 1 training questions" -- "$bin" train \
  "$src/configs/babi-1k-pertask.yaml" --set data.dir="$tmp/babi" --set data.tasks=1 --set train.run_dir="$tmp/run-babi"
: > "$tmp/empty.tsv"
expect 1 "empty.tsv holds no training pairs \(the file is empty\)" -- "$bin" train "$src/configs/dates.yaml" \
  --set data.generator= --set data.train_tsv="$tmp/empty.tsv" --set train.run_dir="$tmp/run-empty"
expect 1 "adam: eps must be a finite number > 0, got 0" -- "$bin" train "$src/configs/dates.yaml" \
  --set train.optimizer.name=adam --set train.optimizer.eps=0 --set train.run_dir="$tmp/run-eps"
[ ! -e "$tmp/run-eps/last" ] || { echo "FAIL: eps 0 trained"; fails=$((fails + 1)); }
# A resumed run keeps its settings: another seed is refused by name, a longer max_steps is taken.
ntm_small="--set ntm.task.bits=3 --set ntm.task.max_len=4 --set ntm.ntm.controller_size=8 --set data.valid_sequences=4 --set train.log_every=1"
expect 0 "" -- "$bin" train "$src/configs/ntm-copy.yaml" $ntm_small --set train.max_steps=3 --set train.run_dir="$tmp/run-resume"
expect 1 "resuming with train.seed 2 \(the run has 1\)" -- "$bin" train "$src/configs/ntm-copy.yaml" $ntm_small \
  --set train.max_steps=3 --set train.seed=2 --set train.run_dir="$tmp/run-resume"
expect 0 "" -- "$bin" train "$tmp/run-resume" --set train.max_steps=5
expect 1 "data.extrapolation.min_repeat 0 / max_repeat 5: a copy task does not repeat" -- "$bin" train \
  "$src/configs/ntm-copy.yaml" $ntm_small --set data.extrapolation.sequences=2 --set data.extrapolation.max_repeat=5 \
  --set train.max_steps=1 --set train.run_dir="$tmp/run-extrap"
expect 1 "memn2n: task.seeds holds 2 twice" -- "$bin" train "$src/configs/babi-1k-pertask.yaml" --set data.dir="$tmp/babi" \
  --set "task.seeds=[1,2,2]" --set train.run_dir="$tmp/run-seeds"
# A damaged trainer.json is named, not an exception's text.
sed -i 's/"loss": [0-9.e+-]*,/"loss": "abc",/' "$tmp/run-resume/last/trainer.json"
expect 1 "last/trainer.json is damaged: 'loss' is not a number" -- "$bin" train "$tmp/run-resume" --set train.max_steps=6
sed -i -e 's/"loss": "abc",/"loss": 1.5,/' -e '/"epoch": [0-9]*,/d' "$tmp/run-resume/last/trainer.json"
expect 1 "last/trainer.json is damaged: 'epoch' is missing or not a count" -- "$bin" train "$tmp/run-resume" --set train.max_steps=6

# --help and --version to a full device fail like any other write.
expect 1 "cannot write to standard output" -- sh -c "exec \"$bin\" --help > /dev/full"
expect 1 "cannot write to standard output" -- sh -c "exec \"$bin\" --version > /dev/full"
expect 1 "cannot write to standard output" -- sh -c "exec \"$bin\" ntm show --help > /dev/full"

# -o PATH goes through what is at PATH: a link to a device stays a link and the device is written
# (a full one is an error, never "written"); a FIFO is written into; a directory is refused; a
# link to a regular file keeps the link and replaces the file it names. Links in $tmp stand in
# for the devices, so that an engram that replaced them could not damage /dev.
out_checks() {  # out_checks NAME COMMAND... (the command takes -o PATH last)
  local name=$1
  shift
  rm -rf "$tmp/o" && mkdir "$tmp/o"
  ln -s /dev/full "$tmp/o/full.svg"
  expect 1 "cannot write $tmp/o/full.svg: No space left on device" -- "$@" -o "$tmp/o/full.svg"
  checks=$((checks + 1))
  [ -L "$tmp/o/full.svg" ] && ! grep -q "written\|wrote" "$tmp/out" ||
    { echo "FAIL: $name -o LINK-TO-/dev/full replaced the link or said written"; fails=$((fails + 1)); }
  ln -s /dev/null "$tmp/o/null.svg"
  expect 0 "" -- "$@" -o "$tmp/o/null.svg"
  checks=$((checks + 1))
  [ -L "$tmp/o/null.svg" ] || { echo "FAIL: $name -o LINK-TO-/dev/null replaced the link"; fails=$((fails + 1)); }
  mkfifo "$tmp/o/fifo"
  (timeout 20 cat "$tmp/o/fifo" > "$tmp/o/from_fifo") &
  local reader=$!
  expect 0 "" -- timeout 20 "$@" -o "$tmp/o/fifo"
  [ -p "$tmp/o/fifo" ] || printf x > "$tmp/o/fifo" 2> /dev/null  # an engram that replaced it: free the reader
  wait "$reader"
  checks=$((checks + 1))
  [ -p "$tmp/o/fifo" ] && grep -q "</svg>" "$tmp/o/from_fifo" ||
    { echo "FAIL: $name -o FIFO replaced the FIFO or wrote nothing into it"; fails=$((fails + 1)); }
  mkdir "$tmp/o/real" && printf old > "$tmp/o/real/pic.svg" && ln -s real/pic.svg "$tmp/o/pic.svg"
  expect 0 "" -- "$@" -o "$tmp/o/pic.svg"
  checks=$((checks + 1))
  [ -L "$tmp/o/pic.svg" ] && grep -q "</svg>" "$tmp/o/real/pic.svg" && [ "$(ls "$tmp/o/real")" = pic.svg ] ||
    { echo "FAIL: $name -o LINK-TO-FILE replaced the link or left a temporary file"; fails=$((fails + 1)); }
  expect 1 "cannot write $tmp/o/real: it is a directory" -- "$@" -o "$tmp/o/real"
}
printf '{"event":"train","step":1,"loss":2}\n{"event":"train","step":2,"loss":1}\n' > "$tmp/metrics.jsonl"
out_checks attention "$bin" attention -m "$golden/seq2seq" "29 November 2026"
out_checks plot "$bin" plot "$tmp/metrics.jsonl"
out_checks "ntm show" "$bin" ntm show -m "$golden/ntm" --length 3
out_checks "pointer show" "$bin" pointer show -m "$golden/pointer" --n 4
out_checks "pointer-generator show" "$bin" pointer-generator show -m "$pg" "reports say Zisi won the race"

# Sizes and numbers out of range: refused, never overflowed, wrapped or saturated.
expect 2 "--chart-width: Value 1073741824 not in range" -- "$bin" plot "$tmp/metrics.jsonl" --chart-width 1073741824 -o "$tmp/p.svg"
expect 2 "--columns: Value 1000 not in range" -- "$bin" plot "$tmp/metrics.jsonl" --columns 1000 -o "$tmp/p.svg"
expect 2 "--seed: 18446744073709551616 is beyond the 64-bit integer range" -- "$bin" ntm show -m "$golden/ntm" --seed 18446744073709551616 -o "$tmp/n.svg"
expect 2 "--seed: 99999999999999999999 is beyond the 64-bit integer range" -- "$bin" pointer eval -m "$golden/pointer" --seed 99999999999999999999
expect 1 "--buckets .* must be increasing integers in \[1, 1000000\]" -- "$bin" eval bleu "$tmp/hyp" "$tmp/hyp" --by-length "$tmp/hyp" --buckets 10,99999999999

# eval bleu: a smoothing value that is not finite or negative, or for a method without one.
for v in nan inf -1; do
  expect 1 "--smooth-value .* must be a finite number >= 0" -- "$bin" eval bleu "$tmp/hyp" "$tmp/hyp" --smooth-method floor --smooth-value "$v"
done
expect 1 "--smooth-value applies to --smooth-method floor or add-k, not exp" -- "$bin" eval bleu "$tmp/hyp" "$tmp/hyp" --smooth-value 0.5

# Model-directory files are read up to a documented limit, whatever they are (a link to /dev/zero
# has size 0): one error naming the file and the limit, in bounded memory: 4 GB of address space,
# or under AddressSanitizer (which reserves terabytes of shadow address space, so ulimit -v cannot
# apply: ENGRAM_SANITIZED, set by CMakeLists.txt) 4 GB of resident memory (hard_rss_limit_mb).
bounded=(sh -c "ulimit -v 4000000; exec \"\$@\"" sh)
if [ -n "${ENGRAM_SANITIZED:-}" ]; then
  bounded=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=4000")
fi
cp -r "$golden/seq2seq" "$tmp/m" && rm "$tmp/m/src.vocab.txt" && ln -s /dev/zero "$tmp/m/src.vocab.txt"
stdin=$tmp/in expect 1 "$tmp/m/src.vocab.txt: more than 64 MiB \(the limit of a vocabulary file" -- "${bounded[@]}" "$bin" translate -m "$tmp/m"
rm "$tmp/m/src.vocab.txt" && cp "$golden/seq2seq/src.vocab.txt" "$tmp/m/" && rm "$tmp/m/config.yaml" && ln -s /dev/zero "$tmp/m/config.yaml"
stdin=$tmp/in expect 1 "config.yaml: more than 16 MiB \(the limit of a YAML config file" -- "${bounded[@]}" "$bin" translate -m "$tmp/m"

# Generated data sets are held whole: a count the machine cannot hold is refused naming it, before
# anything is drawn (bounded: the same 4 GB as above). An allocation the machine cannot give at all
# (a batch of 2^31 sequences) is "out of memory", not "std::bad_alloc" (checked below).
for set in "ntm-copy data.valid_sequences" "ntm-copy data.extrapolation.sequences" "dates data.generate_train" \
           "pointer-sort data.valid_instances" "pointer-sort data.train_instances" \
           "pointer-generator-names data.generate_valid"; do
  read -r cfg key <<< "$set"
  expect 1 "$key 2147483647 needs more than [0-9.]+ GiB, over the limit of 3/4 of this machine's memory" -- \
    "${bounded[@]}" "$bin" train "$src/configs/$cfg.yaml" --set "$key=2147483647" --set train.run_dir="$tmp/huge"
done
mkdir -p "$tmp/babi-ten"
for i in 1 2 3 4 5 6 7 8 9 10; do printf '1 Mary moved to the bathroom.\n2 Where is Mary?\tbathroom\t1\n'; done \
  > "$tmp/babi-ten/qa1_single-supporting-fact_train.txt"
printf '1 Mary moved to the bathroom.\n2 Where is Mary?\tbathroom\t1\n' \
  > "$tmp/babi-ten/qa1_single-supporting-fact_test.txt"
# AddressSanitizer's operator new ends the process on an allocation it cannot make (it never
# throws std::bad_alloc, whatever allocator_may_return_null says), so these run in the plain build.
if [ -z "${ENGRAM_SANITIZED:-}" ]; then
  oom_line="out of memory: a size in the config, the options or the input asks for more memory than this machine can give"
  for key in data.batch_size ntm.task.max_len; do
    expect 1 "$oom_line" -- "$bin" train "$src/configs/ntm-copy.yaml" --set "$key=2147483647" \
      --set train.run_dir="$tmp/huge" --set train.max_steps=1
  done
  expect 1 "$oom_line" -- "$bin" train "$src/configs/babi-1k-pertask.yaml" --set memn2n.hops=2147483647 \
    --set data.dir="$tmp/babi-ten" --set data.tasks=1 --set train.run_dir="$tmp/huge" --set train.max_steps=1
  # A vector longer than it can be (std::length_error) is the same line.
  expect 1 "$oom_line" -- "$bin" train "$src/configs/ntm-recall.yaml" --set ntm.task.item_len=2147483647 \
    --set train.run_dir="$tmp/huge"
else
  echo "exit_codes_test: the 4 out-of-memory checks run in the plain build (AddressSanitizer aborts on them)"
fi
# An RNN width whose gate rows (4 H) would pass int is refused by name, before any product of it
# wraps.
expect 1 "rnn 'ntm/controller': hidden_size 2147483647 is past 536870911" -- "$bin" train "$src/configs/ntm-copy.yaml" \
  --set ntm.ntm.controller_size=2147483647 --set train.run_dir="$tmp/huge"
# Speech: SpecAugment mask counts and the frame stack (stack · F is an int) have upper bounds;
# 2^31 digit strings are refused before any is made.
expect 1 "spec_augment: mask counts must be in \[0, 1000\], got 1 and 2147483647" -- "$bin" train \
  "$src/configs/fsdd-digits.yaml" --set data.spec_augment.time_masks=2147483647 --set train.run_dir="$tmp/huge"
expect 1 "speech: stack 2147483647 must be in 1..1000" -- "$bin" train "$src/configs/fsdd-digits.yaml" \
  --set speech.stack=2147483647 --set train.run_dir="$tmp/huge"
expect 1 "speech: data.train_strings 2147483647 needs more than [0-9.]+ GiB, over the limit" -- "${bounded[@]}" "$bin" \
  train "$src/configs/fsdd-digits.yaml" --set data.train_strings=2147483647 --set train.run_dir="$tmp/huge"
# The TSP heuristic's starts (each a whole search of an instance) have an upper bound.
expect 1 "1 <= tsp_starts <= 1000, got 10 and 2147483647" -- "$bin" train "$src/configs/pointer-tsp.yaml" \
  --set data.tsp_starts=2147483647 --set train.run_dir="$tmp/huge"

# Training options out of their ranges are errors: a noise fraction outside [0, 1] (NaN included),
# a decay every 0 or -1 epochs, a NaN init, a NaN constant memory, a negative max_pairs and
# bleu_sentences 0.
babi_ten=(--set data.dir="$tmp/babi-ten" --set data.tasks=1 --set train.run_dir="$tmp/run-babi-ten")
expect 1 "memn2n: data.random_noise nan must be a fraction in \[0, 1\]" -- "$bin" train \
  "$src/configs/babi-1k-pertask.yaml" "${babi_ten[@]}" --set data.random_noise=nan
expect 1 "memn2n: task.lr_decay_epochs must be >= 1, got 0" -- "$bin" train "$src/configs/babi-1k-pertask.yaml" \
  "${babi_ten[@]}" --set task.lr_decay_epochs=0
expect 1 "memn2n: init_stddev nan must be a finite number >= 0" -- "$bin" train "$src/configs/babi-1k-pertask.yaml" \
  "${babi_ten[@]}" --set memn2n.init_stddev=nan
expect 1 "ntm: memory_init_value nan must be finite" -- "$bin" train "$src/configs/ntm-copy.yaml" \
  --set ntm.ntm.memory_init_value=nan --set train.run_dir="$tmp/run-nan-memory"
expect 1 "seq2seq data: max_pairs -1 must be >= 0 \(0 = all\)" -- "$bin" train "$src/configs/dates.yaml" \
  --set data.max_pairs=-1 --set train.run_dir="$tmp/run-pairs"
expect 1 "bleu_sentences 0 >= 1" -- "$bin" train "$src/configs/dates.yaml" --set data.bleu_sentences=0 \
  --set train.run_dir="$tmp/run-pairs"

# A second YAML document in a config is an error, not ignored.
{ cat "$src/configs/dates.yaml"; printf -- '---\ntrain: {max_steps: 1}\n'; } > "$tmp/two.yaml"
expect 1 "two.yaml: 2 YAML documents, the second at line" -- "$bin" train "$tmp/two.yaml" --dump-config

# Raw bytes in an error line are escaped: no control character or invalid UTF-8 reaches the terminal.
bad_name="$tmp/bad$(printf '\033')[31m$(printf '\377')name"
expect 1 'bad\\x1B\[31m\\xFFname: cannot open' -- "$bin" eval bleu "$bad_name" "$tmp/hyp"
checks=$((checks + 1))
! LC_ALL=C grep -q "$(printf '\033')" "$tmp/err" || { echo "FAIL: a raw escape byte reached stderr"; fails=$((fails + 1)); }

echo "exit_codes_test: $((checks - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
