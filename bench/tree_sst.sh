#!/usr/bin/env bash
# SST accuracy of the tree family over several seeds (bench/results_tree.md): for every cell, view
# and seed, `engram train configs/sst-CELL-VIEW.yaml` on one thread (best/ chosen by dev root
# accuracy), then the test split evaluated once at the end with `engram sentiment eval`; prints a
# Markdown table of mean ± std (sample std over the seeds) with every seed's figure, the all-node
# accuracy, the epoch of best/ and the wall time of each run. Runs already finished (RUNS/NAME/
# result.txt) are not trained again, so the script can be stopped and started, and `TRAIN=0` only
# prints the table of what is there.
#
# Usage: bench/tree_sst.sh
# Environment (all optional):
#   BUILD=dir      build directory holding the engram binary (default build)
#   RUNS=dir       where the run directories go (default runs/sst-seeds)
#   CELLS="..."    cells (default "treelstm rnn childsum")
#   VIEWS="..."    views (default "fine binary")
#   SEEDS="..."    seeds (default "1 2 3 4 5")
#   EPOCHS=N       train.max_epochs (default 15)
#   JOBS=N         trainings at once (default 2; each is OMP_NUM_THREADS=1 nice)
#   SETS="k=v ..." more config overrides for every run (e.g. "train.optimizer.param_lr=[]")
#   TAG=name       suffix of the run directories and the table's model column for such a variant
#   TRAIN=0        only print the table
#   OUT=file       Markdown output (default RUNS/table.md)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BUILD:-build}
bin=$build/engram
runs=${RUNS:-runs/sst-seeds}
cells=${CELLS:-treelstm rnn childsum}
views=${VIEWS:-fine binary}
seeds=${SEEDS:-1 2 3 4 5}
epochs=${EPOCHS:-15}
jobs=${JOBS:-2}
sets=${SETS:-}
tag=${TAG:-}
out=${OUT:-$runs/table${tag:+-$tag}.md}
[ -x "$bin" ] || { echo "tree_sst.sh: $bin missing (build the engram target, or set BUILD)" >&2; exit 1; }
mkdir -p "$runs"

# One run: train, evaluate best/ on test, write RUNS/NAME/result.txt (key=value lines).
one_run() {
  local cell=$1 view=$2 seed=$3 dir="$runs/$1-$2-s$3${tag:+-$tag}" extra=() kv
  for kv in $sets; do extra+=(--set "$kv"); done
  [ -f "$dir/result.txt" ] && return 0
  local t0 t1
  t0=$(date +%s)
  OMP_NUM_THREADS=1 nice "$bin" train "configs/sst-$cell-$view.yaml" --threads 1 --set "train.seed=$seed" \
    --set "train.max_epochs=$epochs" --set "train.run_dir=$dir" "${extra[@]}" > "$dir.train.log" 2>&1 ||
    { echo "tree_sst.sh: training $dir failed (see $dir.train.log)" >&2; return 1; }
  t1=$(date +%s)
  OMP_NUM_THREADS=1 nice "$bin" sentiment eval -m "$dir" --split test > "$dir.eval.log" 2>&1 ||
    { echo "tree_sst.sh: evaluating $dir failed (see $dir.eval.log)" >&2; return 1; }
  local rootacc allacc
  rootacc=$(sed -n 's/^root accuracy *\([0-9.]*\)%.*/\1/p' "$dir.eval.log")
  allacc=$(sed -n 's/^all-node accuracy *\([0-9.]*\)%.*/\1/p' "$dir.eval.log")
  [ -n "$rootacc" ] && [ -n "$allacc" ] || { echo "tree_sst.sh: no accuracy in $dir.eval.log" >&2; return 1; }
  printf 'root=%s\nall=%s\nwall_s=%s\n' "$rootacc" "$allacc" "$((t1 - t0))" > "$dir/result.txt.tmp"
  mv "$dir/result.txt.tmp" "$dir/result.txt"
  echo "$dir: test root $rootacc%, all-node $allacc%, $((t1 - t0)) s" >&2
}

if [ "${TRAIN:-1}" != 0 ]; then
  pids=()
  failed=0
  for cell in $cells; do
    for view in $views; do
      for seed in $seeds; do
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || failed=1; done
        one_run "$cell" "$view" "$seed" &
        pids+=($!)
      done
    done
  done
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
  [ "$failed" = 0 ] || echo "tree_sst.sh: some runs failed; the table shows the finished ones" >&2
fi

/usr/bin/python3 - "$runs" "$cells" "$views" "$seeds" "$epochs" "$tag" <<'EOF' | tee "$out"
import json, os, statistics, sys
runs, cells, views, seeds, epochs, tag = (sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4].split(),
                                          sys.argv[5], sys.argv[6])
names = {"treelstm": "constituency Tree-LSTM", "rnn": "recursive net", "childsum": "child-sum Tree-LSTM"}
print(f"| model | view | test root acc. mean ± std | seeds (root %) | all-node acc. mean (seeds) | best/ epoch | wall s per run |")
print("|---|---|---|---|---|---|---|")
for cell in cells:
    for view in views:
        rows = []
        for seed in seeds:
            d = os.path.join(runs, f"{cell}-{view}-s{seed}" + (f"-{tag}" if tag else ""))
            f = os.path.join(d, "result.txt")
            if not os.path.exists(f):
                continue
            r = dict(line.strip().split("=", 1) for line in open(f) if "=" in line)
            best_epoch, best, done = None, -1.0, 0
            for line in open(os.path.join(d, "metrics.jsonl")):
                j = json.loads(line)
                if j.get("event") == "valid":
                    done = max(done, j["epoch"])
                    if j["root_acc"] > best:
                        best, best_epoch = j["root_acc"], j["epoch"]
            rows.append((seed, float(r["root"]), float(r["all"]), int(r["wall_s"]), best_epoch, done))
        if not rows:
            continue
        roots = [x[1] for x in rows]
        std = statistics.stdev(roots) if len(roots) > 1 else float("nan")
        print(f"| {names.get(cell, cell)}{f' ({tag})' if tag else ''} | {view} | **{statistics.mean(roots):.2f} ± {std:.2f}** ({len(rows)} seeds) | "
              + ", ".join(f"{x[1]:.1f}" for x in rows) + " | "
              + f"{statistics.mean(x[2] for x in rows):.2f} (" + ", ".join(f"{x[2]:.1f}" for x in rows) + ") | "
              + ", ".join(f"{x[4]}/{x[5]}" for x in rows) + " | "
              + ", ".join(str(x[3]) for x in rows) + " |")
EOF
