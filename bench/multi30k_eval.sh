#!/usr/bin/env bash
# Multi30k De->En test scores of trained runs (issue 3): translates test_2016_flickr with each
# run's best checkpoint (greedy and beam 5), prints sacreBLEU-13a BLEU (cased, detokenized: the
# references are the raw captions) and chrF, and BLEU by source-length bucket, as Markdown.
#
# Usage: bench/multi30k_eval.sh RUN_DIR [RUN_DIR ...]
# Environment (all optional):
#   ENGRAM_BIN=path        the engram binary (default build/engram)
#   ENGRAM_DATA_DIR=dir    corpora (default ../shared/data)
#   BEAM=5 ALPHA=0.6       beam search settings of the second column
#   BUCKETS=10,15,20       source-length bucket bounds in words
#   THREADS=1              BLAS threads for decoding
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=${ENGRAM_BIN:-build/engram}
data=${ENGRAM_DATA_DIR:-../shared/data}
beam=${BEAM:-5}
alpha=${ALPHA:-0.6}
buckets=${BUCKETS:-10,15,20}
threads=${THREADS:-1}
[ $# -ge 1 ] || { echo "usage: bench/multi30k_eval.sh RUN_DIR [RUN_DIR ...]" >&2; exit 2; }
. bench/multi30k_test.sh multi30k_eval.sh

echo "| run | attention | epochs (steps) | train min | dev BLEU (greedy) | test BLEU greedy | test BLEU beam $beam (α $alpha) | test chrF2 beam | decode s (beam) |"
echo "|---|---|---|---|---|---|---|---|---|"
for run in "$@"; do
  name=$(basename "$run")
  "$bin" translate -m "$run" --threads "$threads" < "$tmp/src.de" > "$tmp/$name.greedy"
  t0=$(date +%s.%N)
  "$bin" translate -m "$run" --threads "$threads" --beam "$beam" --alpha "$alpha" < "$tmp/src.de" > "$tmp/$name.beam"
  secs=$(echo "$(date +%s.%N) - $t0" | bc)
  g=$("$bin" eval bleu -b "$tmp/$name.greedy" "$tmp/ref.en")
  b=$("$bin" eval bleu -b "$tmp/$name.beam" "$tmp/ref.en")
  c=$("$bin" eval chrf -b "$tmp/$name.beam" "$tmp/ref.en")
  att=$(grep -m1 '^  attention:' "$run/train.yaml" | awk '{print $2}')
  best=$(python3 - "$run/metrics.jsonl" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"valid"' in l]
best = max(rows, key=lambda r: r["bleu"])
last = rows[-1]
print(f'{best["bleu"]:.1f}|{last["epoch"]} ({last["step"]})|{last.get("elapsed_s", float("nan")) / 60:.0f}')
EOF
)
  IFS='|' read -r dev epochs mins <<< "$best"
  echo "| $name | $att | $epochs | $mins | $dev | $g | $b | $c | $(printf '%.1f' "$secs") |"
  cp "$tmp/$name.beam" "$run/test_2016_flickr.beam.en" 2>/dev/null || true
done
echo
for run in "$@"; do
  name=$(basename "$run")
  echo "BLEU by source length (words), beam $beam, $name:"
  echo
  "$bin" eval bleu "$tmp/$name.beam" "$tmp/ref.en" --by-length "$tmp/src.de" --buckets "$buckets" | tail -n +3
  echo
done
echo "Commands: \`zcat $src_gz | $bin translate -m RUN [--beam $beam --alpha $alpha] > hyp\`;" \
     "\`$bin eval bleu hyp REF [--by-length SRC --buckets $buckets]\`"
