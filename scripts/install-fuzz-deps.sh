#!/usr/bin/env bash
# Installs what `make fuzz` needs (DESIGN.md: clang + libFuzzer), only the packages that are
# missing: clang 14 with its sanitizer/libFuzzer runtimes and OpenMP headers (the engine's OpenMP
# files are compiled with -fopenmp). Not part of `make deps`: `make test` builds with g++ only.
set -euo pipefail
exec "$(dirname "$0")/install-deps.sh" clang libfuzzer-14-dev libclang-rt-14-dev libomp-14-dev
