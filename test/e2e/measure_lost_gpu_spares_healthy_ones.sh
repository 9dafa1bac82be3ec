#!/usr/bin/env bash
# One lost GPU must not hide the healthy ones. `zeus devices` lists the healthy
# GPU and says why the lost one is skipped; `zeus measure` measures the healthy one, also with
# CUDA_VISIBLE_DEVICES=0; naming the lost GPU is an error that says why.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo '{"devices": [{}, {"lost": true}]}' > "$dir/state.json"
export ZEUS_FAKE_NVML_STATE="$dir/state.json" ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so" ZEUS_POWERCAP_ROOT="$dir/no-powercap"
unset CUDA_VISIBLE_DEVICES
fail() { echo "FAIL: lost GPU: $*" >&2; exit 1; }

out=$("$zeus" devices)
echo "$out" | grep -q "^GPU 0: NVIDIA H100" || fail "healthy GPU 0 not listed: $out"
echo "$out" | grep -q "nvml: used, 1 GPU; GPU 1 skipped: .*GPU_IS_LOST" || fail "no skip reason: $out"

for visible in unset 0; do
  if [ "$visible" = unset ]; then env=(env -u CUDA_VISIBLE_DEVICES); else env=(env CUDA_VISIBLE_DEVICES=0); fi
  "${env[@]}" "$zeus" measure --json -- sleep 0.2 > "$dir/m.json" || fail "measure failed ($visible)"
  python3 - "$dir/m.json" <<'PY' || fail "measurement with CUDA_VISIBLE_DEVICES=$visible"
import json, sys
m = json.load(open(sys.argv[1]))
assert list(m["gpu_energy_j"]) == ["0"], m
assert abs(m["gpu_energy_j"]["0"] / m["time_s"] - 350) < 10, m
PY
done

if CUDA_VISIBLE_DEVICES=1 "$zeus" devices > "$dir/out.txt" 2> "$dir/err.txt"; then
  fail "CUDA_VISIBLE_DEVICES=1 (the lost GPU) was accepted: $(cat "$dir/out.txt")"
fi
grep -q "names GPU 1, which cannot be used" "$dir/err.txt" || fail "message: $(cat "$dir/err.txt")"
echo "measure_lost_gpu_spares_healthy_ones: ok"
