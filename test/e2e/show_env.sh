#!/usr/bin/env bash
# zeus show-env on the fakes: the fake NVML found (its path), ROCm absent with the reason, RAPL
# unavailable with the reason, then available on a fake powercap tree; zeusd unconfigured, then
# reachable over its socket (with the capabilities it grants) and over TCP (ZEUSD_HOST_PORT), and
# unreachable with the error named.
set -euo pipefail
source "$(dirname "$0")/lib/zeusd_lib.sh"
zeus="$ZEUS_BIN/zeus"
fake_gpus '{"devices": [{"name": "NVIDIA A100-SXM4-40GB", "architecture": 7}]}'

"$zeus" show-env > "$dir/text"
"$zeus" show-env --json > "$dir/report.json"
fake_path=$(readlink -f "$ZEUS_NVML_PATH")
grep -q "^  zeus: [0-9]" "$dir/text" || fail "no version: $(cat "$dir/text")"
grep -qF "NVML: $fake_path (loaded as $ZEUS_NVML_PATH)" "$dir/text" || fail "NVML path: $(cat "$dir/text")"
grep -qF "ROCm SMI: not found: cannot load $dir/none.so" "$dir/text" || fail "ROCm reason: $(cat "$dir/text")"
grep -q "GPU 0 (physical 0): NVIDIA A100-SXM4-40GB, .*backend nvml, energy counter yes" "$dir/text" || fail "GPU line: $(cat "$dir/text")"
grep -q "^    amdsmi: not used: " "$dir/text" && grep -q "^    rocm_smi: not used: " "$dir/text" || fail "amd backends reason: $(cat "$dir/text")"
grep -q "^  unavailable: " "$dir/text" || fail "RAPL reason: $(cat "$dir/text")"
grep -q "not configured (set ZEUSD_SOCK_PATH or ZEUSD_HOST_PORT" "$dir/text" || fail "zeusd: $(cat "$dir/text")"
$py - "$dir/report.json" "$fake_path" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["packages"][0]["name"] == "zeus", r["packages"]
nvml = [l for l in r["libraries"] if l["name"] == "NVML"][0]
assert nvml["path"] == sys.argv[2] and nvml["error"] is None, nvml
rocm = [l for l in r["libraries"] if l["name"] == "ROCm SMI"][0]
assert rocm["path"] is None and "none.so" in rocm["error"], rocm
assert [g["backend"] for g in r["gpus"]] == ["nvml"], r["gpus"]
assert {b["backend"]: b["used"] for b in r["backends"]}["nvml"] is True, r["backends"]
assert r["rapl"]["available"] is False and r["rapl"]["detail"], r["rapl"]
assert r["zeusd"] == {"configured": False}, r["zeusd"]
assert r["environment"]["ZEUS_NVML_PATH"].endswith("libnvidia-ml.so.1"), r["environment"]
assert r["environment"]["CUDA_VISIBLE_DEVICES"] is None
# Every variable the project reads is listed, secrets only as set.
for name in ("ZEUS_AMDSMI_PATH", "ZEUS_SYSFS_ROOT", "ZEUS_DATA_DIR", "ZEUS_LOG_LEVEL",
             "ROCR_VISIBLE_DEVICES", "ZEUS_CA_FILE", "ZEUSD_TOKEN", "OPENEI_API_KEY"):
    assert name in r["environment"], name
assert r["environment"]["ZEUSD_TOKEN"] in (None, "[set]"), r["environment"]["ZEUSD_TOKEN"]
assert any(l["name"] == "AMD SMI" for l in r["libraries"]), r["libraries"]
PY

# RAPL on a fake powercap tree.
fake_rapl 1000000 2000000
"$zeus" show-env > "$dir/text"
grep -q "^  available: " "$dir/text" || fail "RAPL on the fake tree: $(cat "$dir/text")"
grep -q "CPU 0: .* (RAPL, DRAM)" "$dir/text" || fail "CPU line: $(cat "$dir/text")"

# zeusd over its socket and over TCP; a non-root process may read GPUs, not control them.
start_zeusd --socket "$sock" --socket-mode 0600 --allow 'gpu-read=*' --tcp 127.0.0.1:0 --log-level info
port=$(sed -n 's/.*and on 127.0.0.1:\([0-9]*\).*/\1/p' "$dir/zeusd.log" | head -1)
[ -n "$port" ] || fail "no TCP port in the zeusd log"
ZEUSD_SOCK_PATH="$sock" "$zeus" show-env > "$dir/text"
grep -qF "endpoint: unix:$sock" "$dir/text" || fail "socket endpoint: $(cat "$dir/text")"
grep -q "reachable: 1 GPUs" "$dir/text" || fail "zeusd reachable: $(cat "$dir/text")"
grep -q "capabilities granted to this process: .*gpu-read" "$dir/text" || fail "capabilities: $(cat "$dir/text")"
if [ "$(id -u)" != 0 ]; then  # root is granted everything
  grep -q "capabilities granted to this process: gpu-read$" "$dir/text" || fail "non-root capabilities: $(cat "$dir/text")"
fi
ZEUSD_HOST_PORT="127.0.0.1:$port" "$zeus" show-env --json > "$dir/report.json"
$py -c "
import json, sys
z = json.load(open(sys.argv[1]))['zeusd']
assert z['reachable'] is True and z['endpoint'] == 'tcp:127.0.0.1:$port' and len(z['gpus']) == 1, z
" "$dir/report.json"
stop_zeusd

# Unreachable: the error is named, the report still comes.
ZEUSD_HOST_PORT="127.0.0.1:$port" "$zeus" show-env > "$dir/text"
grep -q "unreachable: " "$dir/text" || fail "unreachable zeusd: $(cat "$dir/text")"
ZEUSD_HOST_PORT="nonsense:port:" "$zeus" show-env > "$dir/text"
grep -q "ZEUSD_HOST_PORT must be HOST:PORT" "$dir/text" || fail "bad ZEUSD_HOST_PORT: $(cat "$dir/text")"
echo "zeus show-env ok"
