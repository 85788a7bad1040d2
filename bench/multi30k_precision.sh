#!/usr/bin/env bash
# fp32 against bf16 decoding of a trained Multi30k De->En run (issue 3): translates
# test_2016_flickr one sentence at a time and in batches of 64, greedy and beam 5, with
# --precision fp32 and bf16, and prints BLEU (sacreBLEU-13a), wall time and how many outputs
# differ from fp32, as Markdown rows; then how many fp32 outputs differ between one sentence at a
# time and batches of 64.
#
# Usage: bench/multi30k_precision.sh RUN_DIR
# Environment (all optional): ENGRAM_BIN (default build/engram), ENGRAM_DATA_DIR (default
# ../shared/data), THREADS (default 1), ALPHA (default 0.6)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=${ENGRAM_BIN:-build/engram}
data=${ENGRAM_DATA_DIR:-../shared/data}
threads=${THREADS:-1}
alpha=${ALPHA:-0.6}
[ $# -eq 1 ] || { echo "usage: bench/multi30k_precision.sh RUN_DIR" >&2; exit 2; }
run=$1
. bench/multi30k_test.sh multi30k_precision.sh
echo "engram $(git log --format=%h -1 2>/dev/null || echo '?'); $run; $threads thread(s); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| batch | beam | precision | BLEU | time | outputs differing from fp32 |"
echo "|---|---|---|---|---|---|"
for batch in 1 64; do
  for beam in 1 5; do
    for p in fp32 bf16; do
      out="$tmp/$batch-$beam-$p.en"
      t0=$(date +%s.%N)
      "$bin" translate -m "$run" --threads "$threads" --batch "$batch" --beam "$beam" --alpha "$alpha" \
        --precision "$p" < "$tmp/src.de" > "$out"
      secs=$(echo "$(date +%s.%N) - $t0" | bc)
      bleu=$("$bin" eval bleu -b "$out" "$tmp/ref.en")
      differ=-
      [ "$p" = bf16 ] && differ=$(diff "$tmp/$batch-$beam-fp32.en" "$out" | grep -c '^<' || true)
      printf "| %s | %s | %s | %s | %.1f s | %s |\n" "$batch" "$beam" "$p" "$bleu" "$secs" "$differ"
    done
  done
done
echo
# fp32 one sentence at a time runs its few-row products on the packed weight copy, batches of 64
# on oneDNN: the same values summed in other orders.
for beam in 1 5; do
  echo "fp32 beam $beam: $(diff "$tmp/1-$beam-fp32.en" "$tmp/64-$beam-fp32.en" | grep -c '^<' || true) of the outputs differ between --batch 1 and --batch 64"
done
