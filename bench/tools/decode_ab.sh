#!/usr/bin/env bash
# Decoding speed of two engram binaries, interleaved (old, new, old, new, ...), each command with
# --threads 1 on the golden models (tests/golden/models) and inputs drawn from their cases: seq2seq
# translate greedy and beam 5 (20,000 dates lines), pointer_generator summarize greedy and beam 4
# (20,000 articles), pointer eval (3,000 TSP instances of 10 points), speech transcribe beam 3
# (3,000 WAV paths). Prints each case's median and runs (seconds) and whether the two outputs are
# byte for byte the same.
#   bench/tools/decode_ab.sh OLD_ENGRAM NEW_ENGRAM
# Environment: REPS=N runs per side (default 7); CPU=1 times user + system CPU (/usr/bin/time)
# instead of wall time; ONLY=NAME one case.
set -euo pipefail
old=$(realpath "$1") new=$(realpath "$2") reps=${REPS:-7}
cd "$(dirname "$0")/../.."
g=$PWD/tests/golden/models
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
draw() {  # draw N FILE PREFIX: N random first columns of FILE's lines (seed 1), each after PREFIX
  python3 -c 'import random, sys
random.seed(1)
rows = [l.split("\t")[0] for l in open(sys.argv[2]).read().splitlines() if l]
print("\n".join(sys.argv[3] + random.choice(rows) for _ in range(int(sys.argv[1]))))' "$@"
}
draw 20000 "$g/seq2seq/cases.tsv" "" > "$d/dates.txt"
draw 20000 "$g/pointer_generator/cases.tsv" "" > "$d/articles.txt"
draw 3000 "$g/speech/cases.tsv" "$g/speech/" > "$d/wavs.txt"
cases=(
  "translate-greedy|translate -m $g/seq2seq --threads 1|$d/dates.txt"
  "translate-beam5|translate -m $g/seq2seq --beam 5 --threads 1|$d/dates.txt"
  "summarize-greedy|summarize -m $g/pointer_generator --threads 1|$d/articles.txt"
  "summarize-beam4|summarize -m $g/pointer_generator --beam 4 --threads 1|$d/articles.txt"
  "pointer-eval-tsp|pointer eval -m $g/pointer --n 10 --instances 3000 --threads 1|/dev/null"
  "speech-transcribe|speech transcribe -m $g/speech --beam 3 --threads 1|$d/wavs.txt"
)
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for c in "${cases[@]}"; do
  IFS='|' read -r name args input <<<"$c"
  [ -z "${ONLY:-}" ] || [ "$ONLY" = "$name" ] || continue
  o=() n=()
  for _ in $(seq "$reps"); do
    for side in old new; do
      bin=$old; [ $side = new ] && bin=$new
      if [ -n "${CPU:-}" ]; then
        /usr/bin/time -f '%U %S' -o "$d/time" "$bin" $args < "$input" > "$d/$name.$side.out"
        t=$(awk '{print $1 + $2}' "$d/time")
      else
        s=$(date +%s.%N); "$bin" $args < "$input" > "$d/$name.$side.out"; e=$(date +%s.%N)
        t=$(awk -v s="$s" -v e="$e" 'BEGIN {printf "%.3f", e - s}')
      fi
      if [ $side = old ]; then o+=("$t"); else n+=("$t"); fi
    done
  done
  cmp -s "$d/$name.old.out" "$d/$name.new.out" && same=identical || same=DIFFERENT
  printf '%-18s old %s  new %s  | old runs %s| new runs %s| outputs %s\n' "$name" "$(med "${o[@]}")" \
    "$(med "${n[@]}")" "$(printf '%s ' "${o[@]}")" "$(printf '%s ' "${n[@]}")" "$same"
done
