#!/usr/bin/env bash
# `zeus measure` keeps the signals its caller ignored (nohup, `trap '' HUP`)
# ignored, in itself and in the command, so a hang-up does not kill a nohup'ed job.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/state.json" <<'JSON'
{"devices": [{"name": "NVIDIA H100 80GB HBM3", "architecture": 9, "power_draw_mw": 350000,
   "min_limit_mw": 200000, "max_limit_mw": 700000}]}
JSON
export ZEUS_FAKE_NVML_STATE="$dir/state.json"
export ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so"
export ZEUS_POWERCAP_ROOT="$dir/no-powercap"
unset CUDA_VISIBLE_DEVICES
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir

# 1. The command inherits SIGHUP ignored (bit 0 of SigIgn), as under nohup.
( trap '' HUP; "$zeus" measure -- sh -c 'grep SigIgn /proc/self/status' ) > "$dir/ign.txt" 2> /dev/null
mask=$(awk '{print $2}' "$dir/ign.txt")
(( (16#$mask & 1) == 1 )) || fail "SIGHUP is not ignored in the command (SigIgn $mask)"
# 2. Not ignored by the caller: the command gets the default disposition.
"$zeus" measure -- sh -c 'grep SigIgn /proc/self/status' > "$dir/dfl.txt" 2> /dev/null
mask=$(awk '{print $2}' "$dir/dfl.txt")
(( (16#$mask & 1) == 0 )) || fail "SIGHUP is ignored in the command although the caller did not ignore it"
# 3. A hang-up sent to zeus under nohup does not end the job: it finishes and zeus exits 0.
( trap '' HUP; exec "$zeus" measure -- sh -c 'sleep 1; echo survived' ) > "$dir/out.txt" 2> /dev/null &
pid=$!
sleep 0.4
kill -HUP "$pid" 2> /dev/null || true
child=$(pgrep -P "$pid" || true)
[ -n "$child" ] && kill -HUP "$child" 2> /dev/null || true
wait "$pid" || fail "zeus measure exited $? after SIGHUP under nohup"
grep -q survived "$dir/out.txt" || fail "the nohup'ed command did not survive SIGHUP"
echo "measure_signals: ok"
