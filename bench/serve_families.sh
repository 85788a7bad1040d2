#!/usr/bin/env bash
# Dynamic batching per family (bench/results_serve.md): bench/serve_load on each committed golden
# model (tests/golden/models/), its requests made from the first column of the model's cases.tsv
# (one input per request, in turn), 64 clients batched vs --max-batch 1. The golden models are tiny
# (a few thousand parameters), so HTTP and JSON dominate a request: the ratio measures the server's
# batching path, not what a full-size model gains (bench/results_serve.md has the Multi30k-sized one).
#   bench/serve_families.sh [BUILD]          (default build/; REQUESTS=2000 CLIENTS=1,64)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
golden=$root/tests/golden/models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
requests=${REQUESTS:-2000}
clients=${CLIENTS:-1,64}
python3 - "$golden" "$tmp" <<'PY'
import json, re, sys
golden, out = sys.argv[1], sys.argv[2]
def bodies(family, line):
    if family == "seq2seq": return {"src": [line]}
    if family == "memn2n":
        q = line.rfind(".") + 1
        story = [s.strip() + "." for s in line[:q].split(".") if s.strip()]
        return {"story": story, "question": line[q:].strip()}
    if family == "ntm":
        f = [int(x) for x in line.split()]
        return {"length": f[0], "seed": f[2] if len(f) > 2 else 1}
    if family == "pointer": return {"points": [float(x) for x in line.split(" output")[0].split()]}
    if family == "tree": return {"text": line}
    if family == "pointer_generator": return {"article": line}
    raise SystemExit(f"no request shape for {family}")
for family in ["seq2seq", "memn2n", "ntm", "pointer", "tree", "pointer_generator"]:
    with open(f"{golden}/{family}/cases.tsv") as f, open(f"{out}/{family}.jsonl", "w") as o:
        for line in f:
            col = line.rstrip("\n").split("\t")[0]
            if col: o.write(json.dumps(bodies(family, col)) + "\n")
PY
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, commit $(git -C "$root" rev-parse --short HEAD)"
for family in seq2seq memn2n ntm pointer tree pointer_generator; do
  echo
  echo "## $family"
  echo "\$ $build/bench/serve_load -m $golden/$family --bodies $family.jsonl --clients $clients --requests $requests"
  "$build/bench/serve_load" -m "$golden/$family" --bodies "$tmp/$family.jsonl" --clients "$clients" --requests "$requests"
done
