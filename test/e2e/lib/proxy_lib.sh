# Helpers for the e2e tests of zeus proxy (sourced by test/e2e/proxy_*.sh): the fake NVML with
# one idle H100, the fake OpenAI-compatible server (lib/fake_openai.py) whose batch drives its
# power, and proxies in front of it. Needs ZEUS_BIN and ZEUS_FAKES (set by ctest).
# Sets $dir (a scratch folder, removed at exit), $upstream (the fake's port); start_proxy sets
# $port. Everything started here is stopped at exit.

zeus="${ZEUS_BIN:?}/zeus"
py=/usr/bin/python3
lib="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir=$(mktemp -d)
pids=()
proxy_lib_cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap proxy_lib_cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

echo '{"devices": [{"name": "NVIDIA H100 80GB HBM3", "power_draw_mw": 60000}]}' > "$dir/state.json"
export ZEUS_FAKE_NVML_STATE="$dir/state.json"
export ZEUS_NVML_PATH="${ZEUS_FAKES:?}/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so"
export ZEUS_POWERCAP_ROOT="$dir/none"
unset CUDA_VISIBLE_DEVICES ZEUSD_SOCK_PATH

wait_for() {  # file pattern
  for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  fail "no '$2' in $1: $(cat "$1")"
}

"$py" "$lib/fake_openai.py" > "$dir/fake.out" 2> "$dir/fake.err" &
pids+=($!)
wait_for "$dir/fake.out" "port"
upstream=$(sed -n 's/^port //p' "$dir/fake.out")

# start_proxy NAME ARGS...: zeus proxy in front of the fake on a free port, stdout to
# $dir/NAME.out and stderr to $dir/NAME.err; sets $port and $proxy_pid.
start_proxy() {
  local name=$1
  shift
  "$zeus" proxy --upstream "http://127.0.0.1:$upstream" --port 0 "$@" \
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
