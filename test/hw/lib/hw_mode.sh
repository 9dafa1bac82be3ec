# Sourced by the hardware checks: the build tree they run from and the real or fake NVML.
#   hw_mode "$1" STATE_JSON
# sets ZEUS_BUILD_DIR (default: the source tree's build/release) and ZEUS_BIN, py (PYTHON or
# python3), dir (a temporary folder removed on exit) and fake (1 with --dry-run-fake: the fake
# NVML of the build tree with STATE_JSON as its state, no AMD or RAPL; else 0 and the real NVML).
# The fake's state file ($state, ZEUS_FAKE_NVML_STATE) is HW_KIT_FAKE_STATE when set: the GPU
# kit's run.sh --fake sets it to the file its own guard (gpu_state.py restore) acts on, so that
# what a check leaves on the fake GPU is what the guard must undo; else $dir/state.json. Every
# check with a --dry-run-fake mode follows this rule, whether it sources this file or not.
hw_mode() {
  ZEUS_BUILD_DIR=${ZEUS_BUILD_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)/build/release}
  ZEUS_BIN=${ZEUS_BIN:-$ZEUS_BUILD_DIR/bin}
  py=${PYTHON:-python3}
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  fake=0
  if [ "${1:-}" = "--dry-run-fake" ]; then
    fake=1
    state=${HW_KIT_FAKE_STATE:-$dir/state.json}
    echo "$2" > "$state"
    export ZEUS_FAKE_NVML_STATE="$state"
    export ZEUS_NVML_PATH="$ZEUS_BUILD_DIR/fakes/libnvidia-ml.so.1"
    export ZEUS_ROCM_SMI_PATH="$dir/none.so" ZEUS_AMDSMI_PATH="$dir/none.so" ZEUS_POWERCAP_ROOT="$dir/none"
  else
    unset ZEUS_NVML_PATH ZEUS_FAKE_NVML_STATE
  fi
}
