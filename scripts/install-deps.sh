#!/usr/bin/env bash
# Installs the Debian packages engram builds with (DESIGN.md), only those missing; with
# arguments, those packages instead (scripts/install-fuzz-deps.sh).
set -euo pipefail
pkgs=(cmake g++ make libeigen3-dev libopenblas-dev libdnnl-dev libsentencepiece-dev libyaml-cpp-dev
      nlohmann-json3-dev libcli11-dev libfmt-dev libcpp-httplib-dev libgtest-dev libbenchmark-dev
      zlib1g-dev libsndfile1-dev libkissfft-dev libopenmpi-dev openmpi-bin pkg-config)
[ $# -gt 0 ] && pkgs=("$@")
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
