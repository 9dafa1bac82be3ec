#!/usr/bin/env bash
# The GPU check kit (make hw-kit assembles it in build/hw-kit; docs/hardware-checks.md): every
# hardware check of test/hw/ on whatever NVIDIA machine this folder is copied to, in one call,
# with nothing but a Python 3 (with torch for the real workloads) and the NVIDIA driver there:
#
#   ./run.sh [--fake] [OUT_DIR]      (OUT_DIR: $OUT when set, else ./results)
#
# 1. installs the zeus_cpp wheel for this Python (pip install --no-index --target: no network);
# 2. records every GPU's power limit, then runs each check in turn, each under its own time limit
#    within a total of KIT_BUDGET_S (default 480 s), writing OUT_DIR/<check>.log (what it printed:
#    the numbers it compared) and OUT_DIR/<check>.json (status, exit code, seconds, last lines);
# 3. after each check, and when it ends for any reason but SIGKILL (an error; Ctrl-C, SIGTERM,
#    SIGHUP, SIGQUIT: these stop the running check's whole process group at once, TERM, then
#    KILL after KIT_GRACE_S, default 3 s, and exit 128+signal), resets locked SM and memory
#    clocks and puts every power limit back (gpu_state.py, straight through NVML), then removes
#    its temporary work folder (the checks' own temporary folders are inside it);
# 4. writes OUT_DIR/summary.json (GPU, driver, Python, torch, every check) and exits 0 only when
#    every check passed.
#
# --fake runs the same kit on the fake NVML it carries (fakes/libnvidia-ml.so.1) with the
# checks' --dry-run-fake modes: `make test` runs it so the kit is known to work before it first
# meets a GPU. The fake GPU's state is one file, OUT_DIR/fake-nvml/state.json, that every check
# uses (HW_KIT_FAKE_STATE) and the guard restores, so a guard that restores nothing is caught. PYTHON chooses the interpreter (default: the first python3 for which the kit has a
# wheel, preferring one that imports torch). KIT_CHECKS (names, space or comma separated) runs
# only those checks, e.g. a rerun of the ones that failed.
set -uo pipefail
kit=$(cd "$(dirname "$0")" && pwd)
fake=0
out=${OUT:-}
for arg in "$@"; do
  case $arg in
    --fake) fake=1 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
    *) out=$arg ;;
  esac
done
out=$(mkdir -p "${out:-$kit/results}" && cd "${out:-$kit/results}" && pwd)
budget=${KIT_BUDGET_S:-480}
start=$(date +%s)
say() { echo "[kit $(( $(date +%s) - start ))s] $*"; }

# --- the Python: one the kit has a wheel for, torch preferred --------------------------------
tag_of() { "$1" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")' 2>/dev/null; }
py="" wheel=""
for candidate in ${PYTHON:-} python3 python3.12 python3.13 python3.11 python3.10 /usr/bin/python3; do
  command -v "$candidate" > /dev/null || continue
  tag=$(tag_of "$candidate") || continue
  found=$(ls "$kit"/wheels/zeus_cpp-*-"$tag"-"$tag"-*.whl 2>/dev/null | head -1)
  [ -n "$found" ] || continue
  if [ -z "$py" ] || { [ -z "${PYTHON:-}" ] && ! "$py" -c 'import torch' 2>/dev/null && "$candidate" -c 'import torch' 2>/dev/null; }; then
    py=$(command -v "$candidate"); wheel=$found
  fi
  [ -n "${PYTHON:-}" ] && break
done
[ -n "$py" ] || { echo "run.sh: no Python here matches a wheel in $kit/wheels ($(ls "$kit/wheels" | tr '\n' ' ')); set PYTHON" >&2; exit 2; }

work=$(mktemp -d)
# The checks' temporary folders go inside it (TMPDIR), so a check stopped by SIGKILL leaves none;
# searchable by others (0711, not listable) because zeusd_real_gpu's user nobody must reach its
# socket there.
mkdir -m 0711 "$work/tmp" && chmod 0711 "$work"
export ZEUS_BUILD_DIR="$work/tree" ZEUS_BIN="$work/tree/bin" PYTHON="$py" TMPDIR="$work/tmp"
saved="$work/gpu-state.json"
restore_gpus() {
  [ -f "$saved" ] || return 0
  "$py" "$kit/gpu_state.py" restore "$saved" >> "$out/gpu-restore.log" 2>&1 \
    || say "WARNING: restoring the GPUs failed, see $out/gpu-restore.log"
}
# The running check: run in the background (a trapped signal interrupts `wait`, where a
# foreground job would defer it until the check ended) under timeout, which leads a process group
# of its own that holds the check and everything it started.
check_pid=""
grace=${KIT_GRACE_S:-3}
stop_check() {  # TERM to the check's whole group, KILL to what is left after $grace seconds
  local pid=$check_pid tenths=0
  [ -n "$pid" ] || return 0
  check_pid=""
  # (the pid alone too: in the instant before timeout makes its group there is none)
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
  while { kill -0 -- "-$pid" || kill -0 "$pid"; } 2>/dev/null && [ $tenths -lt $((grace * 10)) ]; do
    sleep 0.1; tenths=$((tenths + 1))
  done
  kill -KILL -- "-$pid" 2>/dev/null; kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}
finish() {
  local status=$?
  trap - EXIT
  trap '' INT TERM HUP QUIT
  stop_check
  restore_gpus
  rm -rf "$work"
  exit $status
}
on_signal() {  # every signal a terminal or a supervisor sends: stop, restore, clean up, 128+n
  trap '' INT TERM HUP QUIT PIPE  # once; and a closed terminal or pipe must not stop the restore
  say "SIG$1: stopping${check_pid:+ the running check (process group $check_pid)}, restoring the GPUs"
  exit $((128 + $2))  # finish (the EXIT trap) does it
}
trap finish EXIT
trap 'on_signal INT 2' INT
trap 'on_signal TERM 15' TERM
trap 'on_signal HUP 1' HUP
trap 'on_signal QUIT 3' QUIT

say "installing $(basename "$wheel") for $py"
"$py" -m pip install --no-index --no-deps --disable-pip-version-check --target "$work/site" "$wheel" \
  > "$out/install.log" 2>&1 || { tail -20 "$out/install.log"; say "pip install failed"; exit 1; }
# The layout the checks expect of a build tree: bin/ (zeus, zeusd, helpers), python/ (zeus_cpp),
# fakes/, test/ and bench/ helpers (the kit's own, with their bundled libraries in tree/lib).
cp -a "$kit/tree" "$work/tree"
ln -s "$work/site/zeus_cpp/bin/zeus" "$work/site/zeus_cpp/bin/zeusd" "$work/tree/bin/"
ln -s "$work/site" "$work/tree/python"
for lib in "$work/site/zeus_cpp.libs"/*; do  # the helpers' libraries that the wheel carries
  [ -e "$work/tree/lib/${lib##*/}" ] || ln -s "$lib" "$work/tree/lib/"
done
export PYTHONPATH="$work/site${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1
if [ "$fake" = 1 ]; then  # one fake GPU state for the guard and every check (HW_KIT_FAKE_STATE)
  export ZEUS_NVML_PATH="$work/tree/fakes/libnvidia-ml.so.1" HW_FAKE=1
  mkdir -p "$out/fake-nvml"
  echo '{"devices": [{"power_draw_mw": 200000}]}' > "$out/fake-nvml/state.json"
  export ZEUS_FAKE_NVML_STATE="$out/fake-nvml/state.json" HW_KIT_FAKE_STATE="$out/fake-nvml/state.json"
fi
"$py" "$kit/gpu_state.py" save "$saved" || { say "cannot read the GPUs through NVML"; exit 1; }
"$ZEUS_BIN/zeus" devices --json > "$out/devices.json" 2> "$out/devices.log" || say "zeus devices failed: $(cat "$out/devices.log")"

# --- the checks: name and time limit (s); the budget trims the last ones ---------------------
checks=(nvml_real:90 power_domains_real:60 nvml_power_scope:75 clock_controller_real:45
        zeusd_real_gpu:45 pfo_pipeline_real:150 proxy_torch_real:120 proxy_govern_real:200)
if [ -n "${KIT_CHECKS:-}" ]; then  # a rerun of some of them: KIT_CHECKS="pfo_pipeline_real ..."
  chosen=()
  for entry in "${checks[@]}"; do
    [[ " ${KIT_CHECKS//,/ } " == *" ${entry%%:*} "* ]] && chosen+=("$entry")
  done
  [ ${#chosen[@]} -gt 0 ] || { say "KIT_CHECKS names none of: ${checks[*]%%:*}"; exit 2; }
  checks=("${chosen[@]}")
fi
passed=0 failed=0
for entry in "${checks[@]}"; do
  name=${entry%%:*} limit=${entry##*:}
  left=$(( budget - ($(date +%s) - start) ))
  [ $limit -le $left ] || limit=$left
  t0=$(date +%s%N)
  if [ $limit -lt 10 ]; then
    rc=124; echo "not run: the kit's budget of ${budget}s was spent" > "$out/$name.log"
  else
    say "$name (up to ${limit}s)"
    args=(); [ "$fake" = 1 ] && args=(--dry-run-fake)
    (cd "$work" && exec timeout -k 5 "$limit" bash "$kit/checks/$name.sh" "${args[@]}") > "$out/$name.log" 2>&1 &
    check_pid=$!
    wait "$check_pid"
    rc=$?
    check_pid=""
  fi
  restore_gpus
  seconds=$(( ($(date +%s%N) - t0) / 1000000 ))
  "$py" - "$out/$name.log" "$out/$name.json" "$name" "$rc" "$seconds" "$fake" <<'PY'
import json, sys
log, dest, name, rc, ms, fake = sys.argv[1:]
lines = open(log, errors="replace").read().splitlines()
status = "pass" if rc == "0" else ("timeout" if rc in ("124", "137") else "fail")
json.dump({"check": name, "status": status, "exit_code": int(rc), "seconds": int(ms) / 1000,
           "fake": fake == "1", "log": log, "output_tail": lines[-40:]}, open(dest, "w"), indent=1)
PY
  if [ $rc = 0 ]; then passed=$((passed + 1)); say "$name: pass (${seconds} ms)"
  else failed=$((failed + 1)); say "$name: FAIL (exit $rc, ${seconds} ms): $(tail -3 "$out/$name.log" | tr '\n' ' ')"; fi
done

"$py" - "$out" "$fake" "$wheel" <<'PY'
import glob, json, os, platform, subprocess, sys
out, fake, wheel = sys.argv[1:]
checks = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(out, "*.json")))
          if os.path.basename(p) not in ("summary.json", "devices.json")]
try:
    devices = json.load(open(os.path.join(out, "devices.json")))
except Exception as error:
    devices = {"error": str(error)}
def smi(query):
    try:
        return subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception:
        return None
try:
    import torch
    torch_version = f"{torch.__version__} (CUDA {torch.version.cuda})"
except Exception as error:
    torch_version = f"not importable: {error}"
summary = {"fake": fake == "1", "wheel": os.path.basename(wheel), "python": sys.version.split()[0],
           "platform": platform.platform(), "torch": torch_version,
           "gpus": [{k: g.get(k) for k in ("index", "name", "architecture", "power_limit_w")}
                    for g in devices.get("gpus", [])],
           "nvidia_smi": smi("name,driver_version,power.limit,clocks.max.sm"),
           "passed": sum(c["status"] == "pass" for c in checks),
           "failed": sum(c["status"] != "pass" for c in checks),
           "checks": [{k: c[k] for k in ("check", "status", "exit_code", "seconds")} for c in checks]}
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
PY
say "done: $passed passed, $failed failed; results in $out (summary.json, one .log and .json per check)"
[ $failed = 0 ]
