#!/usr/bin/env bash
# Runs the libFuzzer harnesses of an ENGRAM_FUZZ=ON build one after another and prints the runs
# per harness.  usage: fuzz/run.sh BUILD_DIR SECONDS [HARNESS...]   (default: all of them)
# Each harness starts from its seed corpus fuzz/corpus/<h>/ plus what earlier runs found in
# BUILD_DIR/fuzz-corpus/<h>/ (new inputs go there, never into the source tree); crash, leak,
# timeout and OOM inputs land in BUILD_DIR/fuzz-artifacts/<h>/. Extra libFuzzer flags: FUZZ_FLAGS.
# Exits 1 when any harness reported a finding.
set -uo pipefail
build=${1:?usage: fuzz/run.sh BUILD_DIR SECONDS [HARNESS...]}
seconds=${2:-60}
shift 2 || true
src=$(cd "$(dirname "$0")" && pwd)
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=(safetensors checkpoint config parallel babi tree wav pointer bbc serve http)
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

summary=()
status=0
for h in "${harnesses[@]}"; do
  bin="$build/fuzz/${h}_fuzz"
  [ -x "$bin" ] || { echo "no $bin (build it: cmake --build $build --target fuzz_all)" >&2; exit 2; }
  work="$build/fuzz-corpus/$h" art="$build/fuzz-artifacts/$h" log="$build/fuzz-logs/$h.log"
  mkdir -p "$work" "$art" "$(dirname "$log")"
  dict=()
  [ -f "$src/dict/$h.dict" ] && dict=(-dict="$src/dict/$h.dict")
  echo "== $h: ${seconds}s (log $log)"
  # shellcheck disable=SC2086
  nice -n 10 "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$art/" "${dict[@]}" ${FUZZ_FLAGS:-} "$work" "$src/corpus/$h" > "$log" 2>&1
  rc=$?
  runs=$(grep -aoE 'Done [0-9]+ runs' "$log" | tail -1 | grep -oE '[0-9]+')
  [ -z "$runs" ] && runs=$(grep -aoE 'stat::number_of_executed_units: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+$')
  units=$(find "$work" -type f | wc -l)
  if [ $rc -eq 0 ]; then
    result="ok"
  else
    status=1
    what=$(grep -a -m1 -oE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer): [a-z-]+|FINDING in .*|runtime error: .*' "$log" |
           head -1 | cut -c1-160)
    artifact=$(grep -a -m1 -oE 'Test unit written to [^ ]+' "$log" | sed 's/Test unit written to //')
    [ -z "$what" ] && what=$(grep -a -m1 -v '^INFO' "$log" | cut -c1-120)
    result="FINDING rc=$rc ${what:-see log} ${artifact:+-> $artifact}"
  fi
  line=$(printf '%-12s %12s runs  %5s corpus files  %s' "$h" "${runs:-?}" "$units" "$result")
  echo "$line"
  summary+=("$line")
done
echo
echo "== fuzz summary (${seconds}s each; logs in $build/fuzz-logs/)"
printf '%s\n' "${summary[@]}"
exit $status
