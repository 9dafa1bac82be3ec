#!/usr/bin/env bash
# In run.sh --fake the checks drive the kit's own fake GPU state file, the one its guard
# (gpu_state.py restore) resets, so the fake run exercises the restore: a real check
# (pfo_pipeline_real, whose profiler locks SM clocks) is frozen (SIGSTOP) at a moment the kit's
# state file shows clocks locked, then its whole process group is killed with SIGKILL, as a crash
# would kill it: nothing of the check can undo its changes. run.sh records the check as failed
# (exit 137), and after it the state file shows the clocks unlocked and the power limit at its
# default: the guard did it. No process of the kit is left, and its work folder is gone.
set -euo pipefail
kit=${ZEUS_KIT_DIR:?}
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -x "$kit/run.sh" ] || fail "no kit in $kit: run make hw-kit"
dir=$(mktemp -d)
run_pid=""
cleanup() {
  local p
  [ -z "$run_pid" ] || kill -TERM "$run_pid" 2>/dev/null || true
  sleep 0.2
  for p in $(pgrep -f "$dir/" || true); do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
copy="$dir/kit"
cp -a "$kit" "$copy"
mkdir "$dir/tmp"
unset ZEUS_NVML_PATH ZEUS_FAKE_NVML_STATE HW_KIT_FAKE_STATE PYTHONPATH ZEUS_BIN ZEUS_BUILD_DIR
state="$dir/out/fake-nvml/state.json"
locked() { grep -qs '"locked_sm_clocks_mhz": *\[' "$state"; }

start=$(date +%s)
TMPDIR="$dir/tmp" PYTHON=/usr/bin/python3 KIT_CHECKS=pfo_pipeline_real \
  "$copy/run.sh" --fake "$dir/out" > "$dir/run.log" 2>&1 &
run_pid=$!
killed=""
for _ in $(seq 2400); do  # up to 120 s
  kill -0 "$run_pid" 2>/dev/null || break
  if locked; then
    check=$(pgrep -f "$copy/checks/pfo_pipeline_real.sh" | head -1 || true)
    group=$( [ -n "$check" ] && ps -o pgid= -p "$check" | tr -d ' ' || true)
    if [ -n "$group" ]; then
      kill -STOP -- "-$group"
      if locked; then  # frozen with its clocks locked: a crash now
        kill -KILL -- "-$group"
        killed="$(tr -d '\n ' < "$state" | grep -o '"locked_sm_clocks_mhz":\[[0-9,]*\]' | head -1)"
        break
      fi
      kill -CONT -- "-$group"
    fi
  fi
  sleep 0.05
done
[ -n "$killed" ] || { cat "$dir/run.log"; tail -20 "$dir/out/pfo_pipeline_real.log" 2>/dev/null;
  fail "the kit's state file never showed pfo_pipeline_real's locked clocks (does the check use HW_KIT_FAKE_STATE?)"; }
echo "pfo_pipeline_real killed (SIGKILL to its process group) $(( $(date +%s) - start )) s in, with $killed in the kit's state file"
rc=0
wait "$run_pid" || rc=$?
run_pid=""
[ "$rc" = 1 ] || { cat "$dir/run.log"; fail "run.sh exited with $rc, expected 1 (a failed check)"; }
/usr/bin/python3 - "$state" "$dir/out" <<'PY' || fail "the guard did not restore the kit's fake GPU"
import json, os, sys
state, out = sys.argv[1:]
check = json.load(open(os.path.join(out, "pfo_pipeline_real.json")))
assert check["exit_code"] == 137 and check["status"] != "pass", check
for i, d in enumerate(json.load(open(state))["devices"]):
    bad = {k: d.get(k) for k in ("locked_sm_clocks_mhz", "locked_memory_clocks_mhz") if d.get(k) is not None}
    if d["limit_mw"] != d["default_limit_mw"]:
        bad["limit_mw"] = d["limit_mw"]
    assert not bad, f"GPU {i} not restored: {bad}"
    print(f"GPU {i}: clocks unlocked, power limit {d['limit_mw'] // 1000} W (its default) after the guard")
print("gpu-restore.log:", open(os.path.join(out, "gpu-restore.log")).read().strip().replace("\n", " | "))
PY
left=$(pgrep -af "$dir/" || true)
[ -z "$left" ] || fail "processes of the kit left: $left"
[ -z "$(ls -A "$dir/tmp")" ] || fail "left in TMPDIR: $(ls -A "$dir/tmp")"
echo "the kit's guard restored what the SIGKILLed check left, in the state file the checks use"
