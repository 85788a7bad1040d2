#!/usr/bin/env bash
# ctest Install.ExampleBuildsAgainstTheInstalledPackage: installs the build into a temporary
# prefix, builds examples/ against it (find_package(engram)), trains a tiny seq2seq model with the
# installed `engram` and checks examples/run_model on it and on a missing directory.
#   example_test.sh CMAKE BUILD_DIR SOURCE_DIR BUILD_TYPE CXX [CXX_FLAGS]
set -euo pipefail
cmake=$1 build=$2 source=$3 build_type=$4 cxx=$5 cxx_flags=${6:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/engram-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$cmake" --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "install"; }
for f in bin/engram lib/libengram_core.a lib/libengram_cli.a include/engram/models/registry.h \
         lib/cmake/engram/engramConfig.cmake lib/cmake/engram/engramConfigVersion.cmake \
         lib/cmake/engram/engramTargets.cmake; do
  [[ -e "$tmp/prefix/$f" ]] || fail "not installed: $f"
done
# The package is relocatable: nothing in it points back into the source or build tree.
! grep -rlF -e "$source/" -e "$(cd "$build" && pwd)" "$tmp/prefix/lib/cmake" || fail "package names build paths"

"$cmake" -S "$source/examples" -B "$tmp/examples" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_BUILD_TYPE="$build_type" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$cxx_flags" \
  >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; fail "configure examples/"; }
"$cmake" --build "$tmp/examples" -j 2 >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "build examples/"; }
run_model=$tmp/examples/run_model

(cd "$tmp" && "$tmp/prefix/bin/engram" train "$source/configs/dates.yaml" --set train.max_steps=30 \
  --set train.max_minutes=0 --set train.valid_every=0 --set data.generate_train=300 \
  --set data.generate_valid=20 --set data.bleu_sentences=20 --set seq2seq.hidden=32 \
  --set seq2seq.embed_dim=16 --set seq2seq.attn_dim=16 --set train.run_dir="$tmp/run") \
  >"$tmp/train.log" 2>&1 || { cat "$tmp/train.log"; fail "engram train"; }

out=$(echo "29 November 2026" | "$run_model" "$tmp/run" 2>"$tmp/stderr") || { cat "$tmp/stderr"; fail "run_model"; }
[[ $(wc -l <<<"$out") -eq 1 && -n $out ]] || fail "expected one output line, got: '$out'"
grep -q "^run_model: seq2seq model" "$tmp/stderr" || fail "family not on stderr: $(cat "$tmp/stderr")"
echo "run_model: '29 November 2026' -> '$out'"

# Two inputs -> two lines, in order.
[[ $(printf '1 May 2020\n3 June 1999\n' | "$run_model" "$tmp/run" 2>/dev/null | wc -l) -eq 2 ]] ||
  fail "two inputs did not give two lines"

# A missing model directory: exit 1 and one error line.
rc=0
"$run_model" "$tmp/missing" </dev/null >"$tmp/out" 2>"$tmp/stderr" || rc=$?
[[ $rc -eq 1 ]] || fail "missing directory: exit $rc, expected 1"
[[ $(wc -l <"$tmp/stderr") -eq 1 ]] && grep -q "^run_model: error: .*missing" "$tmp/stderr" ||
  fail "missing directory: expected one 'run_model: error:' line, got: $(cat "$tmp/stderr")"
echo "run_model on a missing directory: $(cat "$tmp/stderr")"
echo "PASS"
