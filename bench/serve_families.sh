#!/usr/bin/env bash
# Dynamic batching per family (bench/results_serve.md): bench/serve_load, 64 clients batched
# (--max-batch 32) vs --max-batch 1, one input per request, on one model of each family.
#   bench/serve_families.sh golden   the committed golden models (tests/golden/models/, a few
#                                    thousand parameters: HTTP and JSON dominate, so the ratio
#                                    measures the server's path, not what batching gains a model);
#                                    requests from each model's cases.tsv
#   bench/serve_families.sh full     models of the shipped configs' shapes (seq2seq Multi30k,
#                                    pointer TSP, memn2n bAbI joint, tree Tree-LSTM SST,
#                                    pointer-generator BBC headlines, NTM copy, speech FSDD digits), trained 2 updates into $RUNS
#                                    (speed does not depend on the weights; an untrained decoder
#                                    may decode to its max length), requests from the corpora under
#                                    ENGRAM_DATA_DIR: Multi30k val.de, random 20-point TSP instances,
#                                    bAbI test stories, SST test trees, BBC articles (400 words),
#                                    NTM copy sequences of random lengths 1-20 and seeds (ntm:
#                                    "alignments": false; ntm_traces: with the heads' traces),
#                                    FSDD test recordings (base64 WAVs) for a 2-update fsdd-digits model
# A decoding family's speed depends on how long its outputs are, so a 2-update model that decodes
# every input to its maximum length is not the trained model's workload: MODEL_<family>=DIR (e.g.
# MODEL_pointer_generator=runs/pg-bbc-headline) serves that model instead, with the same requests.
# Environment: BUILD (build), RUNS (/tmp/engram-serve-families), REQUESTS (2000), CLIENTS (64),
# FAMILIES (all: "seq2seq pointer memn2n tree pointer_generator ntm ntm_traces speech"), MODEL_<family>.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-golden}
build=${BUILD:-$root/build}
data=${ENGRAM_DATA_DIR:-$root/../shared/data}
runs=${RUNS:-/tmp/engram-serve-families}
requests=${REQUESTS:-2000}
clients=${CLIENTS:-64}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A model
if [ "$mode" = golden ]; then
  for f in seq2seq memn2n ntm pointer tree pointer_generator; do model[$f]=$root/tests/golden/models/$f; done
  python3 - "$root/tests/golden/models" "$tmp" <<'PY'
import json, sys
golden, out = sys.argv[1], sys.argv[2]
def body(family, line):
    if family == "seq2seq": return {"src": [line]}
    if family == "memn2n":
        q = line.rfind(".") + 1
        return {"story": [s.strip() + "." for s in line[:q].split(".") if s.strip()], "question": line[q:].strip()}
    if family == "ntm":
        f = [int(x) for x in line.split()]
        return {"length": f[0], "seed": f[2] if len(f) > 2 else 1}
    if family == "pointer": return {"points": [float(x) for x in line.split(" output")[0].split()]}
    if family == "tree": return {"text": line}
    return {"article": line}
for family in ["seq2seq", "memn2n", "ntm", "pointer", "tree", "pointer_generator"]:
    with open(f"{golden}/{family}/cases.tsv") as f, open(f"{out}/{family}.jsonl", "w") as o:
        for line in f:
            col = line.rstrip("\n").split("\t")[0]
            if col: o.write(json.dumps(body(family, col)) + "\n")
PY
elif [ "$mode" = full ]; then
  mkdir -p "$runs"
  train() {  # family config run_dir [--set ...]
    local cfg=$1 dir=$2; shift 2
    [ -e "$dir/train.yaml" ] || "$build/engram" train "$root/configs/$cfg.yaml" --set train.max_steps=2 \
      --set train.run_dir="$dir" "$@" > "$dir.log" 2>&1
  }
  train multi30k-de-en "$runs/seq2seq"; model[seq2seq]=$runs/seq2seq
  train pointer-tsp "$runs/pointer"; model[pointer]=$runs/pointer
  train babi-1k-joint "$runs/memn2n" --set data.dir="$data/babi/en"; model[memn2n]=$runs/memn2n/model
  train sst-treelstm-fine "$runs/tree" --set data.dir="$data/sst"; model[tree]=$runs/tree
  train pointer-generator-bbc-headline "$runs/pointer_generator"; model[pointer_generator]=$runs/pointer_generator
  train ntm-copy "$runs/ntm"; model[ntm]=$runs/ntm; model[ntm_traces]=$runs/ntm
  train fsdd-digits "$runs/speech"; model[speech]=$runs/speech
  python3 - "$data" "$tmp" <<'PY'
import glob, gzip, json, random, sys
data, out = sys.argv[1], sys.argv[2]
with gzip.open(f"{data}/multi30k/raw/val.de.gz", "rt") as f, open(f"{out}/seq2seq.jsonl", "w") as o:
    for i, line in zip(range(1000), f): o.write(json.dumps({"src": [line.strip()]}) + "\n")
rng = random.Random(1)
with open(f"{out}/pointer.jsonl", "w") as o:
    for _ in range(1000): o.write(json.dumps({"points": [[round(rng.random(), 4), round(rng.random(), 4)] for _ in range(20)]}) + "\n")
n = 0
with open(f"{out}/memn2n.jsonl", "w") as o:
    for fn in sorted(glob.glob(f"{data}/babi/en/qa*_test.txt")):
        story = []
        for line in open(fn):
            idx, rest = line.strip().split(" ", 1)
            if idx == "1": story = []
            if "\t" in rest:
                if story and n < 1000: o.write(json.dumps({"story": story[-50:], "question": rest.split("\t")[0]}) + "\n"); n += 1
            else: story.append(rest)
with open(f"{data}/sst/test.txt") as f, open(f"{out}/tree.jsonl", "w") as o:
    for i, line in zip(range(1000), f): o.write(json.dumps({"text": line.strip()}) + "\n")
with open(f"{out}/pointer_generator.jsonl", "w") as o:
    for a in sorted(glob.glob(f"{data}/summarization/bbc-news-summary/articles/*/*.txt"))[:300]:
        lines = open(a, encoding="utf-8", errors="replace").read().split("\n")
        o.write(json.dumps({"article": " ".join(" ".join(lines[1:]).split()[:400])}) + "\n")
with open(f"{out}/ntm.jsonl", "w") as o, open(f"{out}/ntm_traces.jsonl", "w") as t:
    for _ in range(1000):
        q = {"length": rng.randint(1, 20), "seed": rng.randint(0, 1 << 20)}
        t.write(json.dumps(q) + "\n")
        o.write(json.dumps({**q, "alignments": False}) + "\n")
import base64
with open(f"{out}/speech.jsonl", "w") as o:
    for wav in sorted(glob.glob(f"{data}/fsdd/recordings/*_[0-4].wav"))[:300]:  # the upstream test split
        o.write(json.dumps({"wav_base64": base64.b64encode(open(wav, "rb").read()).decode()}) + "\n")
PY
else
  echo "usage: bench/serve_families.sh golden|full" >&2; exit 2
fi
for family in "${!model[@]}"; do
  override=MODEL_$family
  if [ -n "${!override:-}" ]; then model[$family]=${!override}; fi
done
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, commit $(git -C "$root" rev-parse --short HEAD), mode $mode"
for family in ${FAMILIES:-seq2seq pointer memn2n tree pointer_generator ntm ntm_traces speech}; do
  [ -n "${model[$family]:-}" ] || continue
  echo
  echo "## $family (${model[$family]})"
  echo "\$ $build/bench/serve_load -m ${model[$family]} --bodies $family.jsonl --clients $clients --requests $requests --seconds 120"
  "$build/bench/serve_load" -m "${model[$family]}" --bodies "$tmp/$family.jsonl" --clients "$clients" \
    --requests "$requests" --seconds 120
done
