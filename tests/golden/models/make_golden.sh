#!/usr/bin/env bash
# Re-creates the tiny golden checkpoints (seq2seq/, memn2n/, ntm/, tree/, pointer/, pointer_generator/,
# speech/) and their cases.tsv from
# scratch: trains each model with build/engram (fixed seeds, one thread), copies only the files a
# model directory needs to load, then has build/test_models write the model's own outputs for the
# inputs below (ENGRAM_UPDATE_GOLDEN=1 makes GoldenModels.* write cases.tsv instead of checking it).
# A format-stability test, not an accuracy claim: see ../README.md, "models/".
#
#   tests/golden/models/make_golden.sh        (from anywhere; build first: cmake --build build)
#
# Environment: ENGRAM (default <root>/build/engram), TEST_MODELS (default <root>/build/test_models),
# ENGRAM_DATA_DIR (default <root>/../shared/data; bAbI is read from $ENGRAM_DATA_DIR/babi/en).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
engram=${ENGRAM:-$root/build/engram}
test_models=${TEST_MODELS:-$root/build/test_models}
data=${ENGRAM_DATA_DIR:-$root/../shared/data}
export OMP_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# seq2seq: the generated dates task, character GRU 1x24 (bidirectional encoder, 12 per direction),
# additive attention, 1000 Adam updates; about 10k parameters (43 KB).
"$engram" train "$root/configs/dates.yaml" --threads 1 \
  --set seq2seq.embed_dim=12 --set seq2seq.hidden=24 --set seq2seq.attn_dim=16 --set seq2seq.dropout=0 \
  --set data.generate_train=8000 --set data.generate_valid=200 --set data.bleu_sentences=200 \
  --set train.max_epochs=0 --set train.max_minutes=0 --set train.max_steps=1000 --set train.valid_every=250 \
  --set train.log_every=1000 --set train.seed=1 --set train.run_dir="$work/seq2seq" >/dev/null

# memn2n: bAbI 1k task 1 alone, D 10, 3 hops, one seed, linear start 5 epochs then 20 (37 KB).
"$engram" train "$root/configs/babi-1k-pertask.yaml" --threads 1 \
  --set data.dir="$data/babi/en" --set data.tasks=1 --set memn2n.dim=10 --set 'task.seeds=[1]' \
  --set task.linear_start.max_epochs=5 --set train.max_epochs=20 --set train.log_every=1000 \
  --set train.run_dir="$work/memn2n" >/dev/null

# ntm: copy of 4-bit vectors, lengths 1-6, LSTM controller 16, memory 8 x 4, 3000 Adam updates
# at batch 8 (10 KB).
"$engram" train "$root/configs/ntm-copy.yaml" --threads 1 \
  --set ntm.task.bits=4 --set ntm.task.max_len=6 --set ntm.ntm.controller_size=16 \
  --set ntm.ntm.memory_slots=8 --set ntm.ntm.memory_width=4 --set data.batch_size=8 \
  --set data.batches_per_epoch=500 --set train.max_steps=3000 --set train.optimizer.name=adam \
  --set train.optimizer.lr=0.01 --set train.optimizer.eps=1e-8 --set train.optimizer.momentum=0 \
  --set train.log_every=1000 --set train.seed=1 --set train.run_dir="$work/ntm" >/dev/null

"$engram" train "$root/configs/sst-treelstm-fine.yaml" --threads 1 --set data.dir="$data/sst" \
  --set tree.embed=12 --set tree.hidden=12 --set data.max_vocab=400 --set train.max_epochs=1 --set train.seed=1 \
  --set train.log_every=1000 --set train.run_dir="$work/tree" >/dev/null
"$engram" train "$root/configs/pointer-sort.yaml" --threads 1 --set pointer.hidden=16 --set pointer.embed_dim=8 \
  --set data.min_n=4 --set data.max_n=6 --set data.batch_size=32 --set data.batches_per_epoch=100 \
  --set data.valid_instances=100 --set train.max_epochs=0 --set train.max_steps=800 --set train.seed=1 \
  --set train.log_every=1000 --set train.run_dir="$work/pointer" >/dev/null
# pointer_generator: the generated names task, word vocabulary (min_count 5: no name in it),
# LSTM 16, embeddings 8, copy and coverage, 3 epochs of Adam (28 KB).
"$engram" train "$root/configs/pointer-generator-names.yaml" --threads 1 --set pointer_generator.embed_dim=8 \
  --set pointer_generator.hidden=16 --set pointer_generator.coverage=true --set train.seed=1 \
  --set train.log_every=1000 --set train.run_dir="$work/pointer_generator" >/dev/null

# speech: FSDD single digits (ENGRAM_DATA_DIR/fsdd), GRU encoder 12 per direction, decoder 16,
# location attention, 600 Adam updates (30 KB). Its inputs are synthetic WAVs (speech_wavs.py):
# no recording of the corpus is committed.
"$engram" train "$root/configs/fsdd-digits.yaml" --threads 1 --set speech.embed_dim=12 \
  --set speech.encoder_units=12 --set speech.decoder_hidden=16 --set speech.readout_dim=16 --set speech.attn_dim=8 \
  --set speech.token_dim=8 --set train.max_epochs=0 --set train.max_minutes=0 --set train.max_steps=600 \
  --set train.valid_every=300 --set train.log_every=1000 --set train.seed=1 --set train.run_dir="$work/speech" >/dev/null

# Only what loading needs: no optimizer state, trainer.json (it holds the wall time) or metrics.
install_model() {  # install_model FAMILY SOURCE_DIR FILE...
  local family=$1 src=$2
  shift 2
  rm -rf "${here:?}/$family"
  mkdir -p "$here/$family"
  for f in "$@"; do cp "$src/$f" "$here/$family/$f"; done
}
install_model seq2seq "$work/seq2seq/best" config.yaml model.safetensors src.vocab.txt tgt.vocab.txt
install_model memn2n "$work/memn2n/task-1/model" config.yaml model.safetensors vocab.txt data.yaml
install_model ntm "$work/ntm/best" config.yaml model.safetensors
install_model tree "$work/tree/best" config.yaml model.safetensors vocab.txt data.yaml
install_model pointer "$work/pointer/best" config.yaml model.safetensors
install_model pointer_generator "$work/pointer_generator/best" config.yaml model.safetensors vocab.txt
install_model speech "$work/speech/best" config.yaml model.safetensors
python3 "$here/speech_wavs.py"
sed -i 's|^dir: [^#]*#|dir: ""  #|' "$here/tree/data.yaml"
# data.yaml's dir is only eval's default data directory (load_babi_model reads the model's tasks
# and batching from it, never the directory); '' = $ENGRAM_DATA_DIR/babi/en at eval time, so the
# golden copy names no path of the machine that made it.
sed -i 's|^dir: [^#]*#|dir: ""  #|' "$here/memn2n/data.yaml"
grep -q '^dir: ""' "$here/memn2n/data.yaml"

# The inputs, one a line; the test fills in each output after a tab.
cat >"$here/seq2seq/cases.tsv" <<'EOF'
29 November 2026
Nov 29, 2026
29/11/2026
2026年11月29日
Sunday, November 29, 2026
11.29.26
the 3rd of March, 1999
20010704
EOF
cat >"$here/memn2n/cases.tsv" <<'EOF'
Mary moved to the bathroom. John went to the hallway. Where is Mary?
Mary moved to the bathroom. John went to the hallway. Where is John?
Daniel went back to the kitchen. Sandra journeyed to the garden. Daniel travelled to the office. Where is Daniel?
Sandra went to the bedroom. Where is Sandra?
John travelled to the hallway. Mary journeyed to the bathroom. Daniel went back to the bathroom. John moved to the bedroom. Where is John?
Sandra journeyed to the kitchen. Mary went to the garden. Sandra travelled to the hallway. Mary moved to the office. Where is Mary?
EOF
cat >"$here/ntm/cases.tsv" <<'EOF'
1 1 1
3 1 5
4 1 7
5 1 3
6 1 2
6 1 11
2
8 1 4
EOF
cat >"$here/tree/cases.tsv" <<'EOF'
(3 (2 It) (4 (4 rocks)))
(1 (2 The) (1 (1 movie) (0 (0 stinks))))
a gorgeous , witty , seductive movie .
the plot is dull and the acting is worse .
(2 (2 It) (2 (2 is) (2 (2 a) (2 film))))
an intelligent and moving drama
EOF
cat >"$here/pointer/cases.tsv" <<'EOF'
0.5 0.1 0.9 0.3
0.25 0.75 0.5 0.125 0.875
0.9 0.8 0.7 0.6 0.5 0.4
0.11 0.99 0.42 0.63
0.3 0.2 0.1 0.6 0.5 0.4 output 3 2 1 6 5 4
EOF
cat >"$here/pointer_generator/cases.tsv" <<'EOF'
officials said the minister Kovaletu arrived in Bramido for talks
reports say Zisi won the race in Seritof today
in Dalumek the police arrested Forinat after a long search and more is expected soon
crowds in Pelu cheered as Tamiros spoke
news from Vokasim left Brell and flew home
the minister the minister the minister
EOF

# speech: WAV files beside cases.tsv (check_golden reads them from the model's directory).
printf 'tone%s.wav\n' 1 2 3 4 5 6 >"$here/speech/cases.tsv"

ENGRAM_UPDATE_GOLDEN=1 "$test_models" --gtest_filter='GoldenModels.*' >/dev/null
"$test_models" --gtest_filter='GoldenModels.*'
du -b "$here"/seq2seq "$here"/memn2n "$here"/ntm "$here"/tree "$here"/pointer "$here"/pointer_generator "$here"/speech
