#!/usr/bin/env bash
# The GPU check kit (build/hw-kit) stopped by a signal in the middle of a check, as a terminal or
# a supervisor stops it: for each of SIGTERM, SIGINT, SIGHUP and SIGQUIT, run.sh --fake exits
# within seconds (about 4 s: 3 s of grace, then SIGKILL; the bound is 20 s) with 128+signal, not
# when the check would have ended (its limit is 45 s). It leaves no process of the check, no work
# folder (nor the check's own temporary folder, which is inside it), and the fake GPU's power
# limit and locked SM and memory clocks, which the check changed, are back at their defaults in
# the kit's state file (OUT_DIR/fake-nvml/state.json).
# The check is a stand-in, put in a copy of the kit in place of clock_controller_real.sh: it
# changes the fake GPU through NVML from a process that ignores SIGTERM, SIGINT and SIGHUP, as
# does the grandchild it starts, so run.sh must also escalate to SIGKILL before it restores.
# The four runs go side by side (about 10 s in all).
set -euo pipefail
kit=${ZEUS_KIT_DIR:?}
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -x "$kit/run.sh" ] || fail "no kit in $kit: run make hw-kit"
command -v pgrep > /dev/null || fail "pgrep (procps) is missing"
dir=$(mktemp -d)
mark="zeus-kit-stand-in-$$"
cleanup() {  # what a failed run may have left: only processes carrying this run's mark
  local p
  for p in $(pgrep -f "$mark" || true); do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
copy="$dir/kit"
cp -a "$kit" "$copy"
unset ZEUS_NVML_PATH ZEUS_FAKE_NVML_STATE HW_KIT_FAKE_STATE PYTHONPATH ZEUS_BIN ZEUS_BUILD_DIR

cat > "$copy/checks/clock_controller_real.sh" <<'SH'
#!/usr/bin/env bash
# A stand-in check (test/packaging/hw_kit_stops_on_signals.sh): lowers the fake GPU's power limit
# and locks its SM and memory clocks through NVML, then waits 10 minutes in a process that ignores
# SIGTERM/SIGINT/SIGHUP, with a grandchild that does too. $STAND_IN_MARK names both.
set -euo pipefail
[ "${1:-}" = --dry-run-fake ] && [ -n "${HW_KIT_FAKE_STATE:-}" ] \
  || { echo "stand-in: not under run.sh --fake (no HW_KIT_FAKE_STATE)" >&2; exit 2; }
echo '{"devices": [{"name": "NVIDIA H100 80GB HBM3"}]}' > "$HW_KIT_FAKE_STATE"
export ZEUS_FAKE_NVML_STATE="$HW_KIT_FAKE_STATE"
dir=$(mktemp -d)  # under the kit's TMPDIR
touch "$dir/the-stand-in-was-here"
"$PYTHON" - "$STAND_IN_MARK" <<'PY' &
import ctypes, os, signal, subprocess, sys, time
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
nvml = ctypes.CDLL(os.environ["ZEUS_NVML_PATH"])
assert nvml.nvmlInit_v2() == 0
h = ctypes.c_void_p()
assert nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)) == 0
assert nvml.nvmlDeviceSetPowerManagementLimit(h, 250000) == 0
assert nvml.nvmlDeviceSetGpuLockedClocks(h, 1005, 1005) == 0
assert nvml.nvmlDeviceSetMemoryLockedClocks(h, 1593, 1593) == 0
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", sys.argv[1] + "-grandchild"])
print("stand-in: power limit 250 W, SM clocks 1005 MHz, memory clocks 1593 MHz", flush=True)
time.sleep(600)
PY
wait
SH

run_one() {  # SIGNAL NUMBER: one run, its verdict in $dir/verdict-SIGNAL
  local sig=$1 number=$2 out="$dir/out-$1" tmp="$dir/tmp-$1" pid start took rc=0
  mkdir "$tmp"
  # run.sh as a terminal starts it: SIGINT and SIGQUIT not ignored (a background job's are).
  STAND_IN_MARK="$mark-$sig" TMPDIR="$tmp" PYTHON=/usr/bin/python3 KIT_CHECKS=clock_controller_real \
    env --default-signal=INT,QUIT "$copy/run.sh" --fake "$out" > "$dir/run-$sig.log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do
    grep -qs "stand-in: power limit" "$out/clock_controller_real.log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  grep -qs "stand-in: power limit" "$out/clock_controller_real.log" \
    || { echo "the stand-in never changed the GPU: $(cat "$dir/run-$sig.log" "$out"/*.log 2>/dev/null | tail -20)"; return 1; }
  sleep 0.5
  start=$(date +%s%N)
  kill "-$sig" "$pid"
  wait "$pid" || rc=$?
  took=$(( ($(date +%s%N) - start) / 1000000 ))
  echo "SIG$sig: run.sh exited with $rc after $took ms"
  [ "$rc" = $((128 + number)) ] || { echo "exit status $rc, expected $((128 + number))"; cat "$dir/run-$sig.log"; return 1; }
  [ "$took" -lt 20000 ] || { echo "run.sh took $took ms to stop (the check's limit: 45 s)"; return 1; }
  grep -q "SIG$sig: stopping the running check" "$dir/run-$sig.log" || { cat "$dir/run-$sig.log"; return 1; }
  local left
  left=$(pgrep -af "$mark-$sig" || true)
  [ -z "$left" ] || { echo "processes of the check left: $left"; return 1; }
  left=$(ls -A "$tmp")
  [ -z "$left" ] || { echo "left in TMPDIR (the work folder, the check's folder): $left"; return 1; }
  /usr/bin/python3 - "$out/fake-nvml/state.json" <<'PY' || return 1
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
assert d["name"] == "NVIDIA H100 80GB HBM3", d  # the stand-in's own GPU: it used this file
bad = {k: d.get(k) for k in ("locked_sm_clocks_mhz", "locked_memory_clocks_mhz") if d.get(k) is not None}
if d["limit_mw"] != d["default_limit_mw"]:
    bad["limit_mw"] = d["limit_mw"]
assert not bad, f"not restored in the kit's state file: {bad}"
print(f"  the kit's state file: power limit back to {d['limit_mw'] // 1000} W, SM and memory clocks unlocked")
PY
  echo "  no process of the check left, TMPDIR empty (work folder removed)"
}

pids=()
for entry in TERM:15 INT:2 HUP:1 QUIT:3; do
  ( if run_one "${entry%%:*}" "${entry##*:}" > "$dir/verdict-${entry%%:*}" 2>&1; then
      echo ok >> "$dir/verdict-${entry%%:*}"; fi ) &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || true; done
failed=0
for sig in TERM INT HUP QUIT; do
  cat "$dir/verdict-$sig"
  [ "$(tail -1 "$dir/verdict-$sig")" = ok ] || { echo "FAIL: SIG$sig (above)" >&2; failed=1; }
done
[ $failed = 0 ] || exit 1
echo "the kit stops on SIGTERM, SIGINT, SIGHUP and SIGQUIT: check's group killed, GPU restored, work folder removed"
