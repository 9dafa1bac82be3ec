# The setting shared by the e2e tests of zeus proxy (sourced by lib/proxy_lib.sh and
# test/e2e/proxy_*.sh): a scratch folder $dir (removed at exit), the fake NVML with
# ${PROXY_ENV_GPUS:-1} idle H100s in $dir/state.json and no other backend, fail, and wait_for.
# Background processes appended to $pids are stopped at exit. Needs ZEUS_BIN and ZEUS_FAKES
# (set by ctest).

zeus="${ZEUS_BIN:?}/zeus"
py=/usr/bin/python3
lib="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir=$(mktemp -d)
pids=()
proxy_env_cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap proxy_env_cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir

"$py" -c 'import json, sys
gpu = {"name": "NVIDIA H100 80GB HBM3", "power_draw_mw": 60000}
print(json.dumps({"devices": [gpu] * int(sys.argv[1])}))' "${PROXY_ENV_GPUS:-1}" > "$dir/state.json"
export ZEUS_FAKE_NVML_STATE="$dir/state.json"
export ZEUS_NVML_PATH="${ZEUS_FAKES:?}/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so"
export ZEUS_POWERCAP_ROOT="$dir/none"
unset CUDA_VISIBLE_DEVICES ZEUSD_SOCK_PATH

wait_for() {  # file pattern
  for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  fail "no '$2' in $1: $(cat "$1")"
}
