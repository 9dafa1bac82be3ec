#!/usr/bin/env bash
# zeus serve + zeus bso, as a shell user runs them: port 0, a token file, a full trial
# (register, next, report, end, show), 401 without the token, a clean stop on SIGTERM, and the
# answered reports still there after a restart on the same SQLite file.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
dir=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$dir/serve.log" ] && cat "$dir/serve.log" >&2; exit 1; }

# Starts `zeus serve` in the background and sets $url from the line it prints.
start_server() {
  "$zeus" serve --db "sqlite://$dir/db/bso.db" --port 0 --token-file "$dir/token" \
    --trial-timeout 3600 > "$dir/serve.log" 2>&1 &
  server_pid=$!
  url=""
  for _ in $(seq 1 100); do
    url=$(sed -nE 's/^zeus serve: listening on (http:[^ ]+).*/\1/p' "$dir/serve.log")
    [ -n "$url" ] && break
    kill -0 "$server_pid" 2>/dev/null || fail "zeus serve exited early"
    sleep 0.1
  done
  [ -n "$url" ] || fail "zeus serve printed no URL"
  case "$url" in http://127.0.0.1:[0-9]*) ;; *) fail "not bound to 127.0.0.1: $url" ;; esac
}

stop_server() {
  kill -TERM "$server_pid"
  local rc=0
  wait "$server_pid" || rc=$?
  server_pid=""
  [ "$rc" = 0 ] || fail "zeus serve exited $rc on SIGTERM"
  grep -q "zeus serve: stopped" "$dir/serve.log" || fail "no clean stop in the log"
}

field() { sed -nE "s/.*\"$1\":(\"[^\"]*\"|[^,}]*).*/\1/p" | tr -d '"'; }

printf 's3cret-token\n' > "$dir/token"
chmod 600 "$dir/token"
start_server
bso=(--server "$url" --token-file "$dir/token")

# 1. Register from flags; the stored job echoes every field and gets a generated id.
"$zeus" bso register "${bso[@]}" --prefix cli- --batch-sizes 32,64,128 \
  --default-batch-size 64 --max-power 300 --gpu-model A40 --target-metric 0.9 --seed 3 \
  > "$dir/job.json"
job=$(field job_id < "$dir/job.json")
case "$job" in cli-*) ;; *) fail "job id '$job' does not start with the prefix" ;; esac
for key in eta_knob beta_knob mab_seed max_power number_of_gpus window_size; do
  grep -q "\"$key\"" "$dir/job.json" || fail "register did not echo $key"
done

# 2. The same job from a JSON file (as a Python client would send it) is the same job.
"$zeus" bso register "${bso[@]}" --spec "$dir/job.json" | grep -q "\"job_id\":\"$job\"" \
  || fail "registering the stored spec again did not return the same job"

# 3. next -> report -> converged.
"$zeus" bso next "${bso[@]}" --job-id "$job" > "$dir/t1.json"
[ "$(field batch_size < "$dir/t1.json")" = 64 ] || fail "first trial is not the default size"
[ "$(field trial_number < "$dir/t1.json")" = 1 ] || fail "first trial number is not 1"
"$zeus" bso report "${bso[@]}" --job-id "$job" --batch-size 64 --trial-number 1 --time 10 \
  --energy 1000 --metric 0.5 --epoch 1 | grep -q '"stop_train":false' \
  || fail "a report below the target did not say keep training"
"$zeus" bso report "${bso[@]}" --job-id "$job" --batch-size 64 --trial-number 1 --time 20 \
  --energy 2000 --metric 0.95 --epoch 2 | grep -q '"converged":true' \
  || fail "reaching the target did not converge"

# 4. A second trial that dies: end marks it failed; show lists both.
"$zeus" bso next "${bso[@]}" --job-id "$job" > "$dir/t2.json"
"$zeus" bso end "${bso[@]}" --job-id "$job" --batch-size "$(field batch_size < "$dir/t2.json")" \
  --trial-number 2
"$zeus" bso show "${bso[@]}" --job-id "$job" > "$dir/show.txt"
grep -q "converged" "$dir/show.txt" || fail "show lacks the converged trial"
grep -q "failed" "$dir/show.txt" || fail "show lacks the failed trial"
grep -q "4000.0" "$dir/show.txt" || fail "show lacks the belief of batch size 64 (cost 4000 J)"

# 5. Without the token a state change is refused with a clear message; reads stay open.
if "$zeus" bso next --server "$url" --job-id "$job" 2> "$dir/denied.txt"; then
  fail "next without the token succeeded"
fi
grep -qi "token" "$dir/denied.txt" || fail "the 401 message does not mention the token"
"$zeus" bso show --server "$url" --job-id "$job" --json | grep -q '"phase"' \
  || fail "show without the token failed"
"$zeus" bso next "${bso[@]}" --job-id nope 2> "$dir/nope.txt" && fail "unknown job succeeded"
grep -q "unknown job 'nope'" "$dir/nope.txt" || fail "unknown job message: $(cat "$dir/nope.txt")"

# 6. SIGTERM stops cleanly; a restart on the same file still has every answered report.
stop_server
start_server
bso=(--server "$url" --token-file "$dir/token")
"$zeus" bso show "${bso[@]}" --job-id "$job" --json > "$dir/after.json"
grep -q '"status":"converged"' "$dir/after.json" || fail "converged trial lost over a restart"
grep -q '"energy":2000' "$dir/after.json" || fail "the last report was lost over a restart"
grep -q '"status":"failed"' "$dir/after.json" || fail "failed trial lost over a restart"
"$zeus" bso delete "${bso[@]}" --job-id "$job"
"$zeus" bso show "${bso[@]}" --job-id "$job" 2>/dev/null && fail "deleted job still shown"
stop_server

# 7. A busy port is a one-line error, not a crash.
"$zeus" serve --db memory:// --port 0 > "$dir/a.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do grep -qs "listening on" "$dir/a.log" && break; sleep 0.1; done
port=$(sed -nE 's/.*listening on http:\/\/127.0.0.1:([0-9]+).*/\1/p' "$dir/a.log")
[ -n "$port" ] || fail "no port from the second server"
if "$zeus" serve --db memory:// --port "$port" 2> "$dir/busy.txt"; then
  fail "a second server bound a busy port"
fi
grep -q "cannot listen" "$dir/busy.txt" || fail "busy port message: $(cat "$dir/busy.txt")"
echo "serve_cli: ok ($url)"
