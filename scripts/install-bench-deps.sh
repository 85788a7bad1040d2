#!/usr/bin/env bash
# Installs what `make bench` needs beyond scripts/install-deps.sh, only when missing:
# Debian's PyTorch (the reference side), its SentencePiece binding (the PyTorch peer of
# bench/multi30k_throughput.sh tokenises with the checkpoint's own SentencePiece model), perf
# (that script's PROFILE=1 time split) and the OpenMP build of OpenBLAS (DESIGN.md
# "Benchmarking fairly"). Never called by `make test` or CI.
#
# Which BLAS each side loads (checked again at run time by bench/run.sh from /proc/PID/maps):
#   engram   links libopenblas.so.0, which resolves through the Debian alternative
#            libopenblas.so.0-x86_64-linux-gnu (pthread build, priority 100).
#   PyTorch  (libtorch) links libblas.so.3 / liblapack.so.3 (alternatives
#            libblas.so.3-x86_64-linux-gnu / liblapack.so.3-x86_64-linux-gnu).
# Installing libopenblas0-openmp registers its own alternatives at a LOWER priority (95) than
# the pthread build (100), so in auto mode nothing switches. This script checks that after
# installing and puts any alternative that moved back to the pthread build, saying so.
# bench/run.sh then selects each side's library explicitly with LD_LIBRARY_PATH (openblas-pthread
# for engram, openblas-openmp for PyTorch, whose threads are OpenMP threads), independent of
# whatever the alternatives point at.
set -euo pipefail

python=/usr/bin/python3
pkgs=(python3-torch python3-sentencepiece linux-perf libopenblas0-openmp)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

alts=(libopenblas.so.0-x86_64-linux-gnu libblas.so.3-x86_64-linux-gnu liblapack.so.3-x86_64-linux-gnu)
current() { update-alternatives --query "$1" 2>/dev/null | sed -n 's/^Value: //p'; }

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  declare -A before
  for a in "${alts[@]}"; do before[$a]=$(current "$a"); done
  echo "install-bench-deps: installing ${missing[*]} (PyTorch is large: a few minutes)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  for a in "${alts[@]}"; do
    after=$(current "$a")
    if [ -n "${before[$a]}" ] && [ "$after" != "${before[$a]}" ]; then
      echo "install-bench-deps: WARNING: installing moved $a from ${before[$a]} to $after; restoring"
      $sudo update-alternatives --set "$a" "${before[$a]}"
    fi
  done
fi

# engram's OpenBLAS must stay the pthread build (the one it is built and tested with).
ob=$(current libopenblas.so.0-x86_64-linux-gnu)
case "$ob" in
  */openblas-pthread/*) ;;
  *) echo "install-bench-deps: WARNING: libopenblas.so.0 points at '$ob', not openblas-pthread;" \
          "bench/run.sh pins engram to openblas-pthread with LD_LIBRARY_PATH" ;;
esac
[ -e /usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3 ] ||
  { echo "install-bench-deps: openblas-openmp/libblas.so.3 missing" >&2; exit 1; }
$python -c 'import torch, sentencepiece' 2>/dev/null ||
  { echo "install-bench-deps: $python cannot import torch and sentencepiece" >&2; exit 1; }
