# Helpers for the e2e tests that run the real zeusd over the fake libnvidia-ml.so.1 (sourced by
# test/e2e/zeusd_*.sh). Needs ZEUS_BIN and ZEUS_FAKES (set by ctest).
# Sets $dir (a fresh scratch folder under $TMPDIR or /tmp, mode 0755, removed at exit), $sock (a
# socket path in it) and $zeusd_pid (the running zeusd, "" when none; stopped at exit).

zeusd="${ZEUS_BIN:?}/zeusd"
py=/usr/bin/python3
dir=$(mktemp -d)
chmod 755 "$dir"
sock="$dir/zeusd.sock"
zeusd_pid=""
zeusd_lib_cleanup() {
  if [ -n "$zeusd_pid" ]; then kill -TERM "$zeusd_pid" 2>/dev/null || true; wait "$zeusd_pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap zeusd_lib_cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  if [ -s "$dir/zeusd.log" ]; then
    echo "--- the last 20 lines of zeusd's log ($dir/zeusd.log):" >&2
    tail -20 "$dir/zeusd.log" >&2
  else
    echo "--- zeusd's log ($dir/zeusd.log) is empty or missing" >&2
  fi
  exit 1
}

# fake_gpus JSON: the fake NVML's state (its "devices" list); the environment points at the fakes
# only (no ROCm, no powercap, every GPU visible, no zeusd socket inherited).
fake_gpus() {
  echo "$1" > "$dir/state.json"
  chmod 644 "$dir/state.json"
  export ZEUS_FAKE_NVML_STATE="$dir/state.json"
  export ZEUS_NVML_PATH="${ZEUS_FAKES:?}/libnvidia-ml.so.1"
  export ZEUS_ROCM_SMI_PATH="$dir/none.so"
  export ZEUS_POWERCAP_ROOT="$dir/no-powercap"
  unset CUDA_VISIBLE_DEVICES ZEUSD_SOCK_PATH ZEUSD_HOST_PORT ZEUSD_TOKEN
}

# fake_h100_a100: fake_gpus with the two GPUs the Zeus-client tests use (an H100 at 350 W,
# limits 200-700 W; an A100 at 250 W, limits 100-400 W).
fake_h100_a100() {
  fake_gpus '{"devices": [
    {"name": "NVIDIA H100 80GB HBM3", "architecture": 9, "power_draw_mw": 350000,
     "min_limit_mw": 200000, "max_limit_mw": 700000},
    {"name": "NVIDIA A100-SXM4-40GB", "architecture": 7, "power_draw_mw": 250000,
     "min_limit_mw": 100000, "max_limit_mw": 400000}]}'
}

# fake_rapl PACKAGE_UJ DRAM_UJ: a powercap tree with package 0 and its DRAM sub-zone at those
# counters, named by ZEUS_POWERCAP_ROOT.
fake_rapl() {
  local rapl="$dir/powercap/intel-rapl:0"
  mkdir -p "$rapl/intel-rapl:0:0"
  echo package-0 > "$rapl/name"; echo "$1" > "$rapl/energy_uj"; echo 262143328850 > "$rapl/max_energy_range_uj"
  echo dram > "$rapl/intel-rapl:0:0/name"; echo "$2" > "$rapl/intel-rapl:0:0/energy_uj"
  echo 65532610987 > "$rapl/intel-rapl:0:0/max_energy_range_uj"
  export ZEUS_POWERCAP_ROOT="$dir/powercap"
}

# start_zeusd ARGS...: zeusd in the background (stderr in $dir/zeusd.log), until it serves.
# The log is emptied here, before the fork: the background job's own redirection happens later,
# in the child, and on a loaded machine the loop below would read the previous zeusd's log (its
# "zeusd: serving" line, and whatever warnings it printed).
start_zeusd() {
  : > "$dir/zeusd.log"
  "$zeusd" "$@" > /dev/null 2> "$dir/zeusd.log" &
  zeusd_pid=$!
  for _ in $(seq 200); do
    grep -q "zeusd: serving" "$dir/zeusd.log" && return 0
    kill -0 "$zeusd_pid" 2>/dev/null || { zeusd_pid=""; fail "zeusd exited at start"; }
    sleep 0.05
  done
  fail "zeusd did not start"
}

# stop_zeusd: SIGTERM; zeusd must exit 0.
stop_zeusd() {
  kill -TERM "$zeusd_pid"
  local status=0
  wait "$zeusd_pid" || status=$?
  zeusd_pid=""
  [ "$status" = 0 ] || fail "zeusd exited with $status"
}

# api METHOD PATH [BODY]: prints "BODY STATUS".
api() {
  curl -s --unix-socket "$sock" -X "$1" ${3:+-d "$3"} -w ' %{http_code}' "http://zeusd$2"
}

# limit GPU: its power limit in the fake's state, mW (-1 when never set).
limit() {
  "$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][int(sys.argv[2])].get("limit_mw", -1))' "$dir/state.json" "$1"
}
