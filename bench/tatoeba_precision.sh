#!/usr/bin/env bash
# Decoding precisions side by side on a trained zh->en run (issue 39, int8 decoding weights):
# translates the run's held-out pairs (RUN/valid.src, RUN/valid.tgt: 1,000 Tatoeba pairs in the
# tatoeba-cedict-zh-en runs) in batches of 64 and one sentence at a time, greedy and beam 5, with
# --precision fp32, bf16 and int8, and prints sacreBLEU-13a BLEU, chrF2, wall time, sentences/s
# and how many outputs differ from fp32's, as Markdown rows. The time is the whole
# `engram translate` command (loading the model and quantizing its weights included).
#
# Usage: bench/tatoeba_precision.sh RUN_DIR
# Environment (all optional): ENGRAM_BIN (default build/engram), THREADS (default 1),
# PRECISIONS (default "fp32 bf16 int8"), BATCHES (default "64 1"), BEAMS (default "1 5")
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=${ENGRAM_BIN:-build/engram}
threads=${THREADS:-1}
precisions=${PRECISIONS:-fp32 bf16 int8}
batches=${BATCHES:-64 1}
beams=${BEAMS:-1 5}
[ $# -eq 1 ] || { echo "usage: bench/tatoeba_precision.sh RUN_DIR" >&2; exit 2; }
run=$1
[ -f "$run/valid.src" ] && [ -f "$run/valid.tgt" ] || { echo "tatoeba_precision.sh: $run has no valid.src / valid.tgt" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=$(wc -l < "$run/valid.src")
echo "engram $(git log --format=%h -1 2>/dev/null || echo '?'); $run ($n held-out pairs); $threads thread(s);" \
     "CPU $(lscpu | sed -n 's/^Model name: *//p'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| batch | beam | precision | BLEU | chrF2 | time | sentences/s | outputs differing from fp32 |"
echo "|---|---|---|---|---|---|---|---|"
for batch in $batches; do
  for beam in $beams; do
    for p in $precisions; do
      out="$tmp/$batch-$beam-$p.en"
      t0=$(date +%s.%N)
      "$bin" translate -m "$run" --threads "$threads" --batch "$batch" --beam "$beam" --precision "$p" \
        < "$run/valid.src" > "$out"
      secs=$(echo "$(date +%s.%N) - $t0" | bc)
      bleu=$("$bin" eval bleu -b "$out" "$run/valid.tgt")
      chrf=$("$bin" eval chrf -b "$out" "$run/valid.tgt")
      differ=-
      [ "$p" != fp32 ] && [ -f "$tmp/$batch-$beam-fp32.en" ] &&
        differ=$(diff "$tmp/$batch-$beam-fp32.en" "$out" | grep -c '^<' || true)
      printf "| %s | %s | %s | %s | %s | %.2f s | %.0f | %s |\n" "$batch" "$beam" "$p" "$bleu" "$chrf" "$secs" \
        "$(echo "$n / $secs" | bc -l)" "$differ"
    done
  done
done
echo
echo "Command per row: \`$bin translate -m $run --threads $threads --batch B --beam K --precision P < $run/valid.src\`;" \
     "\`$bin eval bleu|chrf -b hyp $run/valid.tgt\`"
