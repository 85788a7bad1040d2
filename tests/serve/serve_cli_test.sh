#!/usr/bin/env bash
# `engram serve` as a process: --port 0 prints the port it chose; it answers over HTTP (bash's
# /dev/tcp, no other client needed); SIGTERM while a request waits for its batch still answers
# it, then the process exits 0; a second model of the same name is a one-line
# error with exit 1, as is a full standard output (it stops serving); an out-of-range port is a
# command-line error (exit 2).
# usage: serve_cli_test.sh ENGRAM_BINARY SOURCE_DIR
set -u
bin=$1 src=$2
golden=$src/tests/golden/models
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/err" ] && sed 's/^/  stderr: /' "$tmp/err"; exit 1; }

# request PORT METHOD PATH [BODY]: the whole HTTP answer (status line, headers, body).
request() {
  local port=$1 method=$2 path=$3 body=${4:-}
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  printf '%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' \
    "$method" "$path" "${#body}" "$body" >&3
  cat <&3
  exec 3<&-
}

"$bin" serve -m "$golden/seq2seq" -m "bab=$golden/memn2n" --port 0 --max-wait-ms 2000 > "$tmp/out" 2> "$tmp/err" &
pid=$!
port=
for _ in $(seq 1 300); do
  port=$(sed -n 's|^engram serve: listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$tmp/out")
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || fail "the server exited before listening"
  sleep 0.1
done
[ -n "$port" ] || fail "no 'listening on' line in 30 s"

request "$port" GET /health | grep -q '"status":"ok"' || fail "GET /health"
request "$port" GET /v1/models | grep -q '"name":"bab"' || fail "GET /v1/models does not list bab"
answer=$(request "$port" POST /v1/babi '{"model": "bab", "story": "Mary moved to the bathroom. John went to the hallway.", "question": "Where is Mary?"}')
# tests/golden/models/memn2n/cases.tsv, line 1: the model answers "bathroom".
echo "$answer" | grep -q '"answer":"bathroom"' || fail "POST /v1/babi: $answer"
echo "$answer" | grep -q '^HTTP/1.1 200' || fail "POST /v1/babi status: $answer"

# SIGTERM while a translation waits for its batch (--max-wait-ms 2000): it is still answered.
request "$port" POST /v1/translate '{"src": "29 November 2026"}' > "$tmp/inflight" &
client=$!
sleep 1
kill -TERM "$pid"
wait "$client"
# tests/golden/models/seq2seq/cases.tsv, line 1: "29 November 2026" -> "2026-11-29".
grep -q '"tgt":"2026-11-29"' "$tmp/inflight" || fail "the request in flight at SIGTERM: $(cat "$tmp/inflight")"
wait "$pid"
rc=$?
pid=
[ "$rc" -eq 0 ] || fail "exit $rc after SIGTERM"

"$bin" serve -m "$golden/seq2seq" -m "$golden/seq2seq" --port 0 > "$tmp/out" 2> "$tmp/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "^engram: error: serve: two models named 'seq2seq'" "$tmp/err" || fail "duplicate names: exit $rc"
"$bin" serve -m "$golden/seq2seq" --port 70000 > "$tmp/out" 2> "$tmp/err"
[ $? -eq 2 ] || fail "--port 70000 is a command-line error"
timeout 30 "$bin" serve -m "$golden/seq2seq" --port 0 > /dev/full 2> "$tmp/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "^engram: error: serve: cannot write to standard output" "$tmp/err" || fail "stdout on a full disk: exit $rc"
echo "serve_cli_test: all checks passed"
