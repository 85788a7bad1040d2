#!/usr/bin/env bash
# Installs the Debian packages engram builds with (DESIGN.md), only those missing, and the npm
# packages of the browser test (tests/web/package-lock.json, `npm ci` into tests/web/node_modules,
# which git ignores); with arguments, those Debian packages only (scripts/install-fuzz-deps.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pkgs=(cmake g++ make libeigen3-dev libopenblas-dev libdnnl-dev libsentencepiece-dev libyaml-cpp-dev
      nlohmann-json3-dev libcli11-dev libfmt-dev libcpp-httplib-dev libgtest-dev libbenchmark-dev
      zlib1g-dev libsndfile1-dev libkissfft-dev libopencc-dev libopenmpi-dev openmpi-bin pkg-config chromium
      pybind11-dev python3-dev python3-numpy python3-pytest)
web=1
if [ $# -gt 0 ]; then
  pkgs=("$@")
  web=0
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node and npm run the browser test; any install of them will do (Debian's nodejs + npm, or another).
if [ "$web" -eq 1 ] && ! { command -v node && command -v npm; } > /dev/null; then
  missing+=(nodejs npm)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
[ "$web" -eq 1 ] || exit 0
# puppeteer-core at the locked version (it downloads no browser: the test drives Debian's
# chromium). Skipped when node_modules already holds this lock file's packages.
web_dir=$root/tests/web
stamp=$web_dir/node_modules/.engram-package-lock.json
if ! cmp -s "$web_dir/package-lock.json" "$stamp"; then
  echo "installing the browser test's npm packages (tests/web: npm ci)"
  (cd "$web_dir" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$web_dir/package-lock.json" "$stamp"
fi
