#!/usr/bin/env bash
# Beam-search outputs two engram binaries must give byte for byte: a refactoring of the search
# keeps behaviour when the md5 sums match. MODEL: a trained seq2seq run; SRC: its source lines.
#   bench/tools/search_ab.sh ENGRAM_BIN MODEL SRC OUTDIR   (then: cmp OLD_OUT/x NEW_OUT/x)
# Options covered: n-best with scores and a length penalty; coverage penalty, n-gram blocking,
# min length and alignments; a length cap and uneven batches; target prefixes; the golden model.
set -euo pipefail
bin=$1; m=$2; src=$3; out=$4; rm -rf "$out"; mkdir -p "$out"
cd "$(dirname "$0")/../.."
$bin translate -m "$m" --beam 5 --alpha 0.6 --n-best 3 --scores < "$src" > "$out/a.txt"
$bin translate -m "$m" --beam 4 --coverage-penalty 0.2 --block-ngram-repeat 2 --min-length 3 \
  --alignments "$out/al.jsonl" < "$src" > "$out/b.txt"
$bin translate -m "$m" --beam 3 --batch 7 --max-length-ratio 0.8 --scores < "$src" > "$out/c.txt"
head -2 "$src" | sed 's/$/\tThe/' | $bin translate -m "$m" --beam 5 --prefix-column --scores > "$out/d.txt"
cut -f1 tests/golden/models/seq2seq/cases.tsv | $bin translate -m tests/golden/models/seq2seq --beam 6 --n-best 6 \
  --scores > "$out/e.txt"
md5sum "$out"/*
