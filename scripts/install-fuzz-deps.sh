#!/usr/bin/env bash
# Installs what `make fuzz` needs (DESIGN.md: clang + libFuzzer), only the packages that are
# missing: clang 14 with its sanitizer/libFuzzer runtimes and OpenMP headers (the engine's OpenMP
# files are compiled with -fopenmp). Not part of `make deps`: `make test` builds with g++ only.
set -euo pipefail
pkgs=(clang libfuzzer-14-dev libclang-rt-14-dev libomp-14-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
