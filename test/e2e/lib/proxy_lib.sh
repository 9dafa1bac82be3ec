# Helpers for the e2e tests of zeus proxy (sourced by test/e2e/proxy_*.sh): lib/proxy_env.sh (the
# fake NVML with one idle H100, $dir, fail, wait_for), the fake OpenAI-compatible server
# (lib/fake_openai.py) whose batch drives its power, and proxies in front of it. Needs ZEUS_BIN
# and ZEUS_FAKES (set by ctest).
# Sets $dir (a scratch folder, removed at exit), $upstream (the fake's port); start_proxy sets
# $port. Everything started here is stopped at exit.

source "$(dirname "${BASH_SOURCE[0]}")/proxy_env.sh"

"$py" "$lib/fake_openai.py" > "$dir/fake.out" 2> "$dir/fake.err" &
pids+=($!)
wait_for "$dir/fake.out" "port"
upstream=$(sed -n 's/^port //p' "$dir/fake.out")

# start_proxy NAME ARGS...: zeus proxy in front of the fake (or of $PROXY_UPSTREAM when set) on a
# free port, stdout to $dir/NAME.out and stderr to $dir/NAME.err; sets $port and $proxy_pid.
start_proxy() {
  local name=$1
  shift
  "$zeus" proxy --upstream "${PROXY_UPSTREAM:-http://127.0.0.1:$upstream}" --port 0 "$@" \
    > "$dir/$name.out" 2> "$dir/$name.err" &
  proxy_pid=$!
  pids+=($proxy_pid)
  wait_for "$dir/$name.out" "serving"
  port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\) in front.*|\1|p' "$dir/$name.out")
}

# stop_proxy: SIGTERM, and the proxy must exit 0.
stop_proxy() {
  kill -TERM "$proxy_pid"
  wait "$proxy_pid" || fail "the proxy did not stop cleanly: $(cat "$dir"/*.err)"
}
