#!/usr/bin/env bash
# Tatoeba zh->en runs with and without CC-CEDICT, attention and fixed C (issue 41): for each run's
# best checkpoint (or RUN/$MODEL), sacreBLEU-13a BLEU and chrF on the 1,000 held-out Tatoeba pairs (RUN/valid.src,
# RUN/valid.tgt: the same pairs in every run of tatoeba-zh-en.yaml / tatoeba-cedict-zh-en.yaml,
# held out by a fixed seed before any dictionary pair is added) and on bench/data/zh-en-places.tsv,
# greedy and beam; the seeds' sentences and their α rows per source word; BLEU by source length in
# characters. Markdown on stdout; hypotheses are kept in RUN/eval/.
#
# Usage: bench/tatoeba_cedict_eval.sh RUN_DIR [RUN_DIR ...]
# Environment (all optional):
#   ENGRAM_BIN=path     the engram binary (default build/engram)
#   BEAM=5              beam size of the beam columns
#   ALPHA=A             GNMT length penalty of every beam decoding (default: each model's own, its
#                       run's decode: section, else 0; set it to compare runs at one value)
#   BUCKETS=6,10,15     source-length bucket bounds in characters
#   THREADS=1           threads for decoding
#   PLOT=FILE.svg       also draw every run's dev BLEU per update in one chart (engram plot)
#   MODEL=avg           score RUN/avg (engram average's output) where a run has it, else its best
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=${ENGRAM_BIN:-build/engram}
beam=${BEAM:-5}
alpha=()  # --alpha A where ALPHA is set, else each model's default
[ -n "${ALPHA:-}" ] && alpha=(--alpha "$ALPHA")
buckets=${BUCKETS:-6,10,15}
threads=${THREADS:-1}
[ $# -ge 1 ] || { echo "usage: bench/tatoeba_cedict_eval.sh RUN_DIR [RUN_DIR ...]" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The held-out pairs: every run that wrote them must hold the same ones.
split=""
for run in "$@"; do
  [ -f "$run/valid.src" ] || continue
  if [ -z "$split" ]; then
    split=$run
  elif ! cmp -s "$run/valid.src" "$split/valid.src" || ! cmp -s "$run/valid.tgt" "$split/valid.tgt"; then
    echo "tatoeba_cedict_eval.sh: $run and $split hold out different pairs" >&2
    exit 1
  fi
done
[ -n "$split" ] || { echo "tatoeba_cedict_eval.sh: no RUN/valid.src among the runs (engram train writes it)" >&2; exit 1; }
grep -v '^#' bench/data/zh-en-places.tsv | cut -f1 > "$tmp/places.zh"
grep -v '^#' bench/data/zh-en-places.tsv | cut -f2 > "$tmp/places.en"
seeds=("欢迎来北京" "欢迎来北京。" "欢迎来自世界各地的朋友来北京参观故宫博物院" "欢迎来自世界各地的朋友来北京参观故宫博物院。")
printf '%s\n' "${seeds[@]}" > "$tmp/seeds.zh"

echo "Held-out pairs: $split/valid.{src,tgt} ($(wc -l < "$split/valid.src") pairs); places: bench/data/zh-en-places.tsv ($(wc -l < "$tmp/places.zh") pairs)."
echo "Beam $beam with length penalty: ${ALPHA:-each model default (RUN/decode.yaml, else 0)}."
echo
echo "| run | attention (style) | CC-CEDICT weights | epochs (steps) | train min | dev BLEU (greedy, best) | held-out BLEU greedy | BLEU beam $beam | chrF2 beam $beam | places BLEU greedy | places BLEU beam $beam | places chrF2 beam $beam |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
# The model scored for a run: RUN/$MODEL where MODEL is set and the run has it, else the run (best/).
model_of() { if [ -n "${MODEL:-}" ] && [ -d "$1/$MODEL" ]; then echo "$1/$MODEL"; else echo "$1"; fi; }
# Its name in the tables: RUN's base name, with /$MODEL where that is what is scored.
label() { if [ "$(model_of "$1")" = "$1" ]; then basename "$1"; else echo "$(basename "$1")/$MODEL"; fi; }
for run in "$@"; do
  name=$(label "$run")
  out=$run/eval
  mkdir -p "$out"
  for set in valid places seeds; do
    case $set in
      valid) src=$split/valid.src ;;
      places) src=$tmp/places.zh ;;
      seeds) src=$tmp/seeds.zh ;;
    esac
    "$bin" translate -m "$(model_of "$run")" --threads "$threads" < "$src" > "$out/$set.greedy.en"
    "$bin" translate -m "$(model_of "$run")" --threads "$threads" --beam "$beam" "${alpha[@]}" < "$src" > "$out/$set.beam.en"
  done
  score() { "$bin" eval "$1" -b "$2" "$3"; }
  vg=$(score bleu "$out/valid.greedy.en" "$split/valid.tgt")
  vb=$(score bleu "$out/valid.beam.en" "$split/valid.tgt")
  vc=$(score chrf "$out/valid.beam.en" "$split/valid.tgt")
  pg=$(score bleu "$out/places.greedy.en" "$tmp/places.en")
  pb=$(score bleu "$out/places.beam.en" "$tmp/places.en")
  pc=$(score chrf "$out/places.beam.en" "$tmp/places.en")
  att="$(grep -m1 '^  attention:' "$run/train.yaml" | awk '{print $2}') ($(grep -m1 '^  style:' "$run/train.yaml" | awk '{print $2}'))"
  dict=$(python3 - "$run/train.yaml" <<'EOF'
import re, sys
t = open(sys.argv[1]).read()
def key(k):
    m = re.search(r'^  ' + k + r': (.*?)\s*(#|$)', t, re.M)
    return m.group(1).strip('"') if m else ""
if not key("dictionary"):
    print("none")
else:
    print(f'names {key("dictionary_name_weight")}, others {key("dictionary_weight")}, '
          f'in sentences {key("dictionary_context_weight") or 0}; unpunctuated {key("unpunctuated_share") or 0}')
EOF
)
  best=$(python3 - "$run/metrics.jsonl" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"valid"' in l]
best = max(rows, key=lambda r: r["bleu"])
last = rows[-1]
print(f'{best["bleu"]:.1f}|{last["epoch"]} ({last["step"]})|{last.get("elapsed_s", float("nan")) / 60:.1f}')
EOF
)
  IFS='|' read -r dev epochs mins <<< "$best"
  echo "| $name | $att | $dict | $epochs | $mins | $dev | $vg | $vb | $vc | $pg | $pb | $pc |"
done

echo
echo "The seeds' sentences (greedy / beam $beam):"
echo
header="| source |"
rule="|---|"
for run in "$@"; do header="$header $(label "$run") greedy | beam $beam |"; rule="$rule---|---|"; done
echo "$header"
echo "$rule"
for i in "${!seeds[@]}"; do
  row="| ${seeds[$i]} |"
  for run in "$@"; do
    row="$row $(sed -n "$((i + 1))p" "$run/eval/seeds.greedy.en") | $(sed -n "$((i + 1))p" "$run/eval/seeds.beam.en") |"
  done
  echo "$row"
done

# α of each output token over the source words 欢迎 / 来 / 北京 / 。 (sums over each word's pieces).
for run in "$@"; do
  grep -q '^  attention: none' "$run/train.yaml" && continue
  for sentence in "欢迎来北京" "欢迎来北京。"; do
    for b in 1 "$beam"; do
      echo "$sentence" | "$bin" translate -m "$(model_of "$run")" --threads "$threads" --beam "$b" "${alpha[@]}" --alignments "$tmp/align.jsonl" > /dev/null
      echo
      echo "α, $(label "$run"), \"$sentence\", beam $b (rows: output tokens; columns: source words, pieces summed):"
      echo
      python3 - "$tmp/align.jsonl" "$sentence" <<'EOF'
import json, sys
j = json.loads(open(sys.argv[1]).readline())
words = ["欢迎", "来", "北京", "。"]
sentence = sys.argv[2]
words = [w for w in words if w in sentence]
# Each source piece covers the next characters of the sentence ("▁" is no character).
spans, pos = [], 0
for p in j["src"]:
    n = len(p.replace("\u2581", ""))
    spans.append((pos, pos + n))
    pos += n
starts, at = [], 0
for w in words:
    starts.append((at, at + len(w)))
    at += len(w)
def word_of(span):
    for k, (a, b) in enumerate(starts):
        if a <= span[0] < b:
            return k
    return None
print("| output | " + " | ".join(words) + " | largest |")
print("|---|" + "---|" * (len(words) + 1))
for tok, row in zip(j["tgt"] + ["<eos>"], j["alignment"]):
    mass = [0.0] * len(words)
    for a, span in zip(row, spans):
        k = word_of(span)
        if k is not None:
            mass[k] += a
    top = max(range(len(words)), key=lambda k: mass[k])
    print(f"| {tok} | " + " | ".join(f"{m:.2f}" for m in mass) + f" | {words[top]} |")
EOF
    done
  done
done

echo
for run in "$@"; do
  echo "BLEU by source length (characters), held-out pairs, beam $beam, $(label "$run"):"
  echo
  "$bin" eval bleu "$run/eval/valid.beam.en" "$split/valid.tgt" --by-length "$split/valid.src" --length-unit chars \
    --buckets "$buckets" | tail -n +3
  echo
done
if [ -n "${PLOT:-}" ]; then  # one series per run: its validation BLEU by update
  for run in "$@"; do
    python3 - "$run/metrics.jsonl" "$(basename "$run")" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    if j.get("event") == "valid":
        print(json.dumps({"event": sys.argv[2], "step": j["step"], "dev BLEU": j["bleu"]}))
EOF
  done > "$tmp/curves.jsonl"
  "$bin" plot "$tmp/curves.jsonl" --metrics "dev BLEU" --columns 1 --chart-width 560 --title "dev BLEU (greedy, 1,000 held-out Tatoeba pairs) by update" -o "$PLOT"
  echo "Drawn: $PLOT (\`$bin plot\` of the runs' validation lines)."
  echo
fi
echo "Commands: \`$bin translate -m RUN [--beam $beam ${alpha[*]}] < SRC > hyp\`; \`$bin eval bleu|chrf hyp REF\`;" \
     "\`$bin eval bleu hyp REF --by-length SRC --length-unit chars --buckets $buckets\`;" \
     "\`echo SENTENCE | $bin translate -m RUN --beam B --alignments FILE\`"
