#!/usr/bin/env bash
# The Python package's overhead: engram.Model.translate_batch over N sentences against
# `engram translate` on the same model, options and input (docs/python.md), interleaved A B A B,
# REPS times. Two measures: each whole process (start, load, decode, write), and the decode
# alone — Python's translate_batch call (timed inside) against the CLI's process less its time on
# empty input (start and load). Prints the medians and the ratios python / CLI.
#
# Usage: bench/python_speed.sh
# Environment (all optional):
#   BUILD=dir    build directory with the engram binary and python/ (default build)
#   MODEL=dir    a seq2seq model directory (default the golden dates model)
#   N=1000       sentences (the model's golden cases repeated, or INPUT's lines)
#   INPUT=file   source sentences, one a line (default: the golden cases)
#   BEAM=1       beam size on both sides
#   REPS=5
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BUILD:-build}
model=${MODEL:-tests/golden/models/seq2seq}
n=${N:-1000}
beam=${BEAM:-1}
reps=${REPS:-5}
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${INPUT:-}" ]; then
  head -n "$n" "$INPUT" > "$tmp/in"
else
  cut -f1 tests/golden/models/seq2seq/cases.tsv > "$tmp/cases"
  : > "$tmp/in"
  while [ "$(wc -l < "$tmp/in" 2>/dev/null || echo 0)" -lt "$n" ]; do cat "$tmp/cases" >> "$tmp/in"; done
  head -n "$n" "$tmp/in" > "$tmp/in.n" && mv "$tmp/in.n" "$tmp/in"
fi
cat > "$tmp/run.py" <<'PY'
import sys
import time
import engram
model, beam, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = open(path, encoding="utf-8").read().splitlines()
m = engram.load(model)
t = time.perf_counter()
out = m.translate_batch(lines, beam=beam)
sys.stderr.write(f"{time.perf_counter() - t}\n")
sys.stdout.write("".join((h[0]["tgt"] if h else "") + "\n" for h in out))
PY
now() { date +%s.%N; }
cli=() pyt=() load=() call=()
for r in $(seq "$reps"); do
  t0=$(now); "$build/engram" translate -m "$model" --beam "$beam" < "$tmp/in" > "$tmp/cli.out"; t1=$(now)
  PYTHONPATH="$build/python" "$py" "$tmp/run.py" "$model" "$beam" "$tmp/in" > "$tmp/py.out" 2> "$tmp/py.call"; t2=$(now)
  "$build/engram" translate -m "$model" --beam "$beam" < /dev/null > /dev/null; t3=$(now)
  cli+=("$(echo "$t1 - $t0" | bc)") pyt+=("$(echo "$t2 - $t1" | bc)") load+=("$(echo "$t3 - $t2" | bc)")
  call+=("$(cat "$tmp/py.call")")
done
cmp -s "$tmp/cli.out" "$tmp/py.out" || { echo "the translations differ between the CLI and Python"; exit 1; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
mc=$(median "${cli[@]}") mp=$(median "${pyt[@]}") ml=$(median "${load[@]}") mcall=$(median "${call[@]}")
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p')"
echo "command: BUILD=$build MODEL=$model N=$n BEAM=$beam REPS=$reps bench/python_speed.sh"
echo "engram translate: median $mc s (${cli[*]})"
echo "python translate_batch: median $mp s (${pyt[*]})"
echo "whole process: python / CLI: $(echo "scale=3; $mp / $mc" | bc)"
echo "engram translate on empty input (start + load): median $ml s"
echo "decode alone: CLI $(echo "$mc - $ml" | bc) s, python translate_batch $mcall s: python / CLI $(echo "scale=3; $mcall / ($mc - $ml)" | bc)"
