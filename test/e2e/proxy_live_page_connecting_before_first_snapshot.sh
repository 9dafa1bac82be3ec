#!/usr/bin/env bash
# The live page's first paint is honest: before its first snapshot
# arrives it says "connecting…" in the counters and the chart, not "0 requests" over an empty
# chart that reads as an idle proxy (what a plain `chromium --headless --screenshot` caught). A
# proxy in front of the fake OpenAI server serves one answer; headless Chromium
# (lib/cdp_browser.py) opens /zeus/ with /zeus/events blocked, so no snapshot can arrive, and
# after 1.5 s (the page redraws every second) the counters and the chart still say
# "connecting…" (screenshot: $ZEUS_BUILD_DIR/test-output/proxy_live_connecting.png). Unblocked
# and loaded again, the snapshot arrives, and the page is live with the one finished request and
# the chart drawn.
set -euo pipefail
source "$(dirname "$0")/lib/proxy_env.sh"
command -v chromium > /dev/null || fail "chromium is not installed; install the Debian package 'chromium'"

"$py" "$lib/fake_openai.py" --gpu 0 --tokens 5 --duration 0.2 > "$dir/fake.out" 2> "$dir/fake.err" &
pids+=($!)
wait_for "$dir/fake.out" "port"
upstream=$(sed -n 's/^port //p' "$dir/fake.out")
"$zeus" proxy --upstream "http://127.0.0.1:$upstream" --port 0 --gpus 0 --interval 0.05 \
  > "$dir/proxy.out" 2> "$dir/proxy.err" &
pids+=($!)
wait_for "$dir/proxy.out" "serving"
port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\) in front.*|\1|p' "$dir/proxy.out")
curl -s -X POST -d '{"max_tokens": 5, "prompt": "hi"}' "http://127.0.0.1:$port/v1/completions" \
  > /dev/null || fail "the request through the proxy"

out="${ZEUS_BUILD_DIR:-$dir}/test-output"
mkdir -p "$out"
rm -f "$out/proxy_live_connecting.png"
seen=$(cd "$lib" && timeout 90 "$py" - "http://127.0.0.1:$port" "$out/proxy_live_connecting.png" <<'PY'
import json, sys, time
from cdp_browser import Browser
base, png = sys.argv[1], sys.argv[2]
state = """({
  status: document.getElementById('status').textContent,
  counters: ['in-flight', 'finished', 'power-now'].map(id => document.getElementById(id).textContent),
  chart: document.getElementById('chart').textContent,
  lines: document.querySelectorAll('#chart polyline').length,
  rows: document.querySelectorAll('#models tbody tr, #requests tbody tr').length,
})"""
seen = {}
with Browser() as b:
    b.open("about:blank")
    b.block(["*/zeus/events*"])
    b.open(base + "/zeus/")
    b.wait_for("document.getElementById('chart') !== null", what="the page")
    time.sleep(1.5)
    seen["before"] = b.evaluate(state)
    b.screenshot(png)
    b.block([])
    b.open(base + "/zeus/")  # Chromium's EventSource gives up on a blocked request: load again
    b.wait_for("document.getElementById('status').textContent === 'live'", timeout=30,
               what="the snapshot after unblocking")
    b.wait_for("document.getElementById('finished').textContent === '1'", what="the finished count")
    seen["after"] = b.evaluate(state)
print(json.dumps(seen))
PY
) || fail "the browser run failed: $(tail -5 "$dir/proxy.err")"
echo "$seen"
"$py" - "$seen" <<'PY' || fail "the live page before and after its first snapshot"
import json, sys
s = json.loads(sys.argv[1])
before, after = s["before"], s["after"]
assert all(c == "connecting…" for c in before["counters"]), before
assert "connecting…" in before["chart"] and before["lines"] == 0 and before["rows"] == 0, before
assert before["status"].startswith("connecting…"), before
assert after["counters"][:2] == ["0", "1"] and after["counters"][2].isdigit(), after
assert "connecting" not in after["chart"] and after["lines"] >= 1 and after["rows"] >= 2, after
PY
[ "$(head -c 4 "$out/proxy_live_connecting.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "no PNG"
echo "the live page says connecting… before its first snapshot: ok"
