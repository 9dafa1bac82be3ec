#!/usr/bin/env bash
# zeus bso tells a missing token from a wrong one (the server's 401 says which),
# names the CLI's --token-file (no C++ API name), and bso show prints no "(, max power" for a job
# without a gpu_model.
set -uo pipefail
zeus="${ZEUS_BIN:?}/zeus"
dir=$(mktemp -d)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2> /dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
echo "right-token" > "$dir/token"; echo "wrong-token" > "$dir/wrong"; chmod 600 "$dir/token" "$dir/wrong"
"$zeus" serve --db memory:// --port 0 --token-file "$dir/token" > "$dir/serve.log" 2>&1 &
server_pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(sed -nE 's/^zeus serve: listening on (http:[^ ]+).*/\1/p' "$dir/serve.log")
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || fail "zeus serve printed no URL: $(cat "$dir/serve.log")"
register=(bso register --server "$url" --prefix c5 --job-id c5-job --batch-sizes 16,32
          --default-batch-size 16 --max-power 300)

"$zeus" "${register[@]}" > /dev/null 2> "$dir/missing.txt" && fail "register without a token succeeded"
grep -q "needs a token" "$dir/missing.txt" || fail "missing token: $(cat "$dir/missing.txt")"
grep -q -- "--token-file FILE" "$dir/missing.txt" || fail "missing token, no --token-file hint: $(cat "$dir/missing.txt")"

"$zeus" "${register[@]}" --token-file "$dir/wrong" > /dev/null 2> "$dir/wrong.txt" && fail "a wrong token was accepted"
grep -q "does not match" "$dir/wrong.txt" || fail "wrong token: $(cat "$dir/wrong.txt")"
grep -q "needs a token" "$dir/wrong.txt" && fail "a wrong token is reported as missing: $(cat "$dir/wrong.txt")"
grep -q -- "--token-file '$dir/wrong' does not hold" "$dir/wrong.txt" || fail "wrong token hint: $(cat "$dir/wrong.txt")"

cat "$dir/missing.txt" "$dir/wrong.txt" | grep -q "BsoHttpClientOptions" && fail "a C++ API name in a CLI message"

"$zeus" "${register[@]}" --token-file "$dir/token" > /dev/null || fail "register with the token failed"
"$zeus" bso show --server "$url" --job-id c5-job > "$dir/show.txt" || fail "show failed"
head -1 "$dir/show.txt" | grep -q "^job c5-job  (max power 300.0 W" || fail "show header: $(head -1 "$dir/show.txt")"
echo "serve_token_errors_say_missing_or_wrong: ok"
