# Sourced by the hardware checks: the build tree they run from and the real or fake NVML.
#   hw_mode "$1" STATE_JSON
# sets ZEUS_BUILD_DIR (default: the source tree's build/release) and ZEUS_BIN, py (PYTHON or
# python3), dir (a temporary folder removed on exit) and fake (1 with --dry-run-fake: the fake
# NVML of the build tree with STATE_JSON as its state, no AMD or RAPL; else 0 and the real NVML).
hw_mode() {
  ZEUS_BUILD_DIR=${ZEUS_BUILD_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)/build/release}
  ZEUS_BIN=${ZEUS_BIN:-$ZEUS_BUILD_DIR/bin}
  py=${PYTHON:-python3}
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  fake=0
  if [ "${1:-}" = "--dry-run-fake" ]; then
    fake=1
    echo "$2" > "$dir/state.json"
    export ZEUS_FAKE_NVML_STATE="$dir/state.json"
    export ZEUS_NVML_PATH="$ZEUS_BUILD_DIR/fakes/libnvidia-ml.so.1"
    export ZEUS_ROCM_SMI_PATH="$dir/none.so" ZEUS_AMDSMI_PATH="$dir/none.so" ZEUS_POWERCAP_ROOT="$dir/none"
  else
    unset ZEUS_NVML_PATH ZEUS_FAKE_NVML_STATE
  fi
}
