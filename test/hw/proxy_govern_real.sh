#!/usr/bin/env bash
# Hardware check (ctest label hw, `make hw`; the GPU kit): zeus proxy --govern in front of a real
# torch generation loop on an NVIDIA GPU (issue 38), against the maximum clock. The tiny
# OpenAI-compatible torch server of proxy_torch_real.sh (lib/proxy_hw_server.py) on cuda:0; the
# first HW_GOVERN_SECONDS (40) x HW_GOVERN_SPEEDUP (4) seconds of Azure's conversation trace (lib/azure_llm_2023_conv.csv, CC-BY
# 4.0, Patel et al., Splitwise, ISCA 2024) replayed 4 times faster than its arrival times, streamed
# (lib/proxy_govern_load.py), once through a plain proxy and once through
# `zeus proxy --govern` with SLOs at twice the first run's p95 (at least 0.25 s TTFT, 20 ms
# TPOT) and --slo-quantile 0.95. Needs root (NVML clock locks) or ZEUSD_SOCK_PATH naming a zeusd
# that grants gpu-control.
# Prints: each run's GPU energy (the proxy's measured J), the saving, the p95 TTFT and TPOT of
# both runs against the SLOs, the governor's SLO attainment and clock changes, the clocks it
# walked (its log). Fails when a run fails, a request gets no token, the governed
# proxy does not stop cleanly or its clocks are not restored; a missed SLO or a small saving is
# a finding, printed, not a failure. Then `zeus proxy calibrate` against the same server (every
# clock of the ladder x 1 and 8 clients x 2 s), the profile printed whole (the kit's log carries it
# back), and `zeus simulate serving` of the whole conversation trace on it. The GPU kit restores
# every GPU setting after it anyway.
#
# --dry-run-fake: the same on the fake NVML with the server sleeping in place of the model (no
# torch; the fake's power does not follow the clock, so no saving is expected), a 12 s slice.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
hw_lib="$here/lib"
ZEUS_BUILD_DIR=${ZEUS_BUILD_DIR:-$here/../../build/release}
ZEUS_BIN=${ZEUS_BIN:-$ZEUS_BUILD_DIR/bin}
zeus="$ZEUS_BIN/zeus"
py=${PYTHON:-python3}
trace="$hw_lib/azure_llm_2023_conv.csv"
[ -f "$trace" ] || trace="$here/../../data/llm_traces/azure_llm_2023_conv.csv"
dir=$(mktemp -d)
source "$hw_lib/hw_procs.sh"  # pids, fail, wait_for; $dir removed on exit
export CUDA_VISIBLE_DEVICES=0
seconds=${HW_GOVERN_SECONDS:-40}
# The trace's arrivals HW_GOVERN_SPEEDUP (4) times faster: the small model answers in
# milliseconds, and at the trace's own pace the GPU would idle most of the time.
export GOVERN_SPEEDUP=${HW_GOVERN_SPEEDUP:-4}
fake=0
if [ "${1:-}" = "--dry-run-fake" ]; then
  fake=1
  state=${HW_KIT_FAKE_STATE:-$dir/state.json}  # the kit's guard's file under run.sh --fake
  echo '{"devices": [{"name": "NVIDIA H100 80GB HBM3", "power_draw_mw": 300000}]}' > "$state"
  export ZEUS_FAKE_NVML_STATE="$state"
  export ZEUS_NVML_PATH="$ZEUS_BUILD_DIR/fakes/libnvidia-ml.so.1"
  export ZEUS_ROCM_SMI_PATH="$dir/none.so" ZEUS_POWERCAP_ROOT="$dir/none"
  export HW_FAKE=1
  unset ZEUSD_SOCK_PATH
  seconds=${HW_GOVERN_SECONDS:-12}
else
  unset ZEUS_NVML_PATH ZEUS_FAKE_NVML_STATE HW_FAKE
  if [ "$(id -u)" != 0 ] && [ -z "${ZEUSD_SOCK_PATH:-}" ]; then
    fail "locking clocks needs root (or ZEUSD_SOCK_PATH naming a zeusd that grants gpu-control)"
  fi
fi

cp "$hw_lib/proxy_hw_server.py" "$dir/server.py"
$py "$dir/server.py" > "$dir/server.out" 2> "$dir/server.err" &
pids+=($!)
wait_for "$dir/server.out" "^port " 60
upstream=$(sed -n 's/^port //p' "$dir/server.out")

run() {  # NAME PROXY-ARGS...: the slice through a proxy; sets $load (the client's JSON)
  local name=$1
  shift
  "$zeus" proxy --upstream "http://127.0.0.1:$upstream" --port 0 --gpus 0 "$@" \
    > "$dir/$name.out" 2> "$dir/$name.err" &
  local proxy_pid=$!
  pids+=($proxy_pid)
  wait_for "$dir/$name.out" "serving" 30
  local port
  port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\) in front.*|\1|p' "$dir/$name.out")
  load=$($py "$hw_lib/proxy_govern_load.py" "$trace" "$port" "$seconds") \
    || fail "$name: the load failed"
  kill -TERM "$proxy_pid"
  wait "$proxy_pid" || fail "$name: the proxy did not stop cleanly: $(tail -5 "$dir/$name.err")"
  echo "$name: $load"
  echo "$load" > "$dir/$name.load"
}

run max
$py - "$dir/max.load" > "$dir/slos" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ttft_s"]["n"] == r["requests"], r  # every request answered with tokens
print(round(max(0.25, 2 * r["ttft_s"]["p95"]), 3), round(max(0.02, 2 * r["tpot_s"]["p95"]), 4))
PY
read -r ttft_slo tpot_slo < "$dir/slos"
echo "SLOs from the maximum-clock run: TTFT ${ttft_slo} s, TPOT ${tpot_slo} s (p95)"
run govern --govern --ttft-slo "$ttft_slo" --tpot-slo "$tpot_slo" --slo-quantile 0.95 \
  --log "$dir/govern.jsonl"
cat "$dir/govern.out"
grep -q "clocks restored" "$dir/govern.out" || fail "the governed proxy said nothing of its clocks"

$py - "$dir" "$ttft_slo" "$tpot_slo" "$fake" <<'PY' || fail "the governed run"
import json, os, re, sys
d, ttft_slo, tpot_slo, fake = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"
def joules(name):
    return float(re.search(r"([0-9.]+) J measured", open(f"{d}/{name}.out").read()).group(1))
mx, gv = json.load(open(d + "/max.load")), json.load(open(d + "/govern.load"))
assert gv["ttft_s"]["n"] == gv["requests"] == mx["requests"], (gv, mx)
e_max, e_gov = joules("max"), joules("govern")
decisions = [json.loads(l) for l in open(d + "/govern.jsonl") if '"type":"governor"' in l.replace(" ", "")]
clocks = [int(r["clock_mhz"]) for r in decisions if r["clock_mhz"] != r["previous_mhz"]]
held = gv["ttft_s"]["p95"] <= ttft_slo and gv["tpot_s"]["p95"] <= tpot_slo
print("energy: maximum clock %.1f J, governed %.1f J: %.1f %% less" % (e_max, e_gov, 100 * (1 - e_gov / e_max)))
print("p95 TTFT %.3f s (max clock %.3f, SLO %.3f), p95 TPOT %.4f s (max clock %.4f, SLO %.4f): SLOs %s"
      % (gv["ttft_s"]["p95"], mx["ttft_s"]["p95"], ttft_slo, gv["tpot_s"]["p95"], mx["tpot_s"]["p95"], tpot_slo,
         "held" if held else "MISSED (a finding)"))
print("clocks walked: %s MHz; %d decisions logged (%s)" % (" ".join(map(str, clocks)) or "none",
      len(decisions), ", ".join(sorted({r["reason"] for r in decisions}))))
assert decisions, "no decision logged"
if fake:
    state = json.load(open(os.environ["ZEUS_FAKE_NVML_STATE"]))["devices"][0]
    assert state.get("locked_sm_clocks_mhz") is None, state
    print("fake: SM clocks unlocked")
PY
# The serving profile of this GPU and server (zeus proxy calibrate), printed whole so the kit's log
# carries it back (for data/), and the trace-driven evaluation on it.
cal_args=(--clocks 1980,1200 --concurrency 1,4 --seconds 1)
[ "$fake" = 0 ] && cal_args=(--concurrency 1,8 --seconds 2)
"$zeus" proxy calibrate --upstream "http://127.0.0.1:$upstream" --gpus 0 "${cal_args[@]}" \
  --prompt-tokens 32 --output-tokens 64 --out "$dir/serving.json" > "$dir/calibrate.out" 2> "$dir/calibrate.err" \
  || fail "zeus proxy calibrate: $(tail -5 "$dir/calibrate.err")"
cat "$dir/calibrate.err" "$dir/calibrate.out"
echo "--- serving profile (zeus-serving-profile/1):"
cat "$dir/serving.json"
"$zeus" simulate serving --trace "$trace" --serving-profile "$dir/serving.json" \
  || fail "zeus simulate serving on the calibrated profile"
if [ "$fake" = 0 ] && command -v nvidia-smi > /dev/null; then
  nvidia-smi -i 0 --query-gpu=clocks.sm,clocks.max.sm,power.draw --format=csv || true
fi
echo "hw proxy govern ok"
