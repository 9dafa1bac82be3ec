# The setting of the governor's e2e tests (test/e2e/proxy_govern.sh, proxy_calibrate.sh):
# lib/proxy_env.sh, with one fake H100 whose SM clocks step by 15 MHz from 1980 down to 210 MHz
# (idle at 60 W), and the clock-aware fake batching server (lib/fake_llm_server.py) in front of
# it. Sets $upstream_port.
source "$(dirname "${BASH_SOURCE[0]}")/proxy_env.sh"
"$py" - "$dir/state.json" <<'PY'
import json, sys
gpu = {"name": "NVIDIA H100 80GB HBM3", "power_draw_mw": 60000,
       "graphics_clocks_mhz": list(range(1980, 209, -15)), "memory_clocks_mhz": [2619, 1593]}
json.dump({"devices": [gpu]}, open(sys.argv[1], "w"))
PY
"$py" "$lib/fake_llm_server.py" > "$dir/fake.out" 2> "$dir/fake.err" &
pids+=($!)
wait_for "$dir/fake.out" "port"
upstream_port=$(sed -n 's/^port //p' "$dir/fake.out")
