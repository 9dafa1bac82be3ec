#!/usr/bin/env bash
# The governor on the live page, in a real browser (issue 38): `zeus proxy --govern` in front of
# the clock-aware fake batching server (lib/fake_llm_env.sh) while 20 s of the conversation trace
# (twice as fast) go through it; headless Chromium (lib/cdp_browser.py) opens /zeus/ and must show
# the SM clock card with a clock below the maximum and the SLO attainment, the dashed clock line
# over the power and its legend, the right axis titled "SM clock, MHz" with round ticks, and the
# clock in force labelled at the line's end. A screenshot goes to
# $ZEUS_BUILD_DIR/test-output/proxy_govern_live.png. A plain proxy's page shows no clock card.
set -euo pipefail
source "$(dirname "$0")/lib/fake_llm_env.sh"
command -v chromium > /dev/null || fail "chromium is not installed; install the Debian package 'chromium'"
trace="$lib/../../../data/llm_traces/azure_llm_2023_conv.csv"

"$zeus" proxy --upstream "http://127.0.0.1:$upstream_port" --port 0 --gpus 0 --interval 0.05 \
  --govern --ttft-slo 5s --tpot-slo 200ms --govern-period 0.25 > "$dir/proxy.out" 2> "$dir/proxy.err" &
pids+=($!)
wait_for "$dir/proxy.out" "serving"
port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\) in front.*|\1|p' "$dir/proxy.out")
GOVERN_SPEEDUP=2 "$py" "$lib/../../hw/lib/proxy_govern_load.py" "$trace" "$port" 20 > "$dir/load.json" &
pids+=($!)

out="${ZEUS_BUILD_DIR:-$dir}/test-output"
mkdir -p "$out"
seen=$(cd "$lib" && timeout 90 "$py" - "http://127.0.0.1:$port" "$out/proxy_govern_live.png" <<'PY'
import json, sys
from cdp_browser import Browser
base, png = sys.argv[1], sys.argv[2]
seen = {}
with Browser() as b:
    b.open(base + "/zeus/")
    b.wait_for("document.getElementById('clock-card').hidden === false", timeout=30, what="the clock card")
    b.wait_for("Number(document.getElementById('clock-now').textContent) < 1980", timeout=40,
               what="a clock below the maximum")
    b.wait_for("document.querySelectorAll('#chart polyline.clock').length === 1 && "
               "document.querySelectorAll('#chart polyline.power').length === 1", what="the lines")
    seen["clock"] = b.evaluate("document.getElementById('clock-now').textContent")
    seen["what"] = b.evaluate("document.getElementById('clock-what').textContent")
    seen["legend"] = b.evaluate("[...document.querySelectorAll('#legend span')].map(s => s.textContent)")
    seen["dashed"] = b.evaluate("document.querySelector('#chart polyline.clock').getAttribute('stroke-dasharray')")
    seen["points"] = b.evaluate("document.querySelector('#chart polyline.clock').getAttribute('points').split(' ').length")
    seen["error"] = b.evaluate("document.getElementById('error').textContent")
    # One evaluation, so the card and the chart are of the same redraw.
    seen["axis"] = b.evaluate("""({
      title: [...document.querySelectorAll('#chart text.clock-axis-title')].map(t => t.textContent),
      ticks: [...document.querySelectorAll('#chart text.clock-tick')].map(t => t.textContent),
      now: [...document.querySelectorAll('#chart text.clock-now')].map(t => t.textContent),
      card: document.getElementById('clock-now').textContent,
      mhz: [...document.querySelectorAll('#chart text')].map(t => t.textContent).filter(t => /[0-9] MHz$/.test(t)),
    })""")
    b.screenshot(png)
print(json.dumps(seen))
PY
) || fail "the browser run failed: $(tail -5 "$dir/proxy.err")"
echo "$seen"
"$py" - "$seen" <<'PY' || fail "the live page"
import json, sys
s = json.loads(sys.argv[1])
assert 900 <= int(s["clock"]) < 1980, s
assert "within the SLOs" in s["what"] and "%" in s["what"], s
assert any("SM clock chosen by --govern" in t for t in s["legend"]), s
assert s["dashed"] and s["points"] >= 5 and s["error"] == "", s
# The right axis is titled with round ticks, and the one clock label
# in MHz is the clock in force, at the line's end ("990 MHz" at the edge read as the clock).
a = s["axis"]
assert a["title"] == ["SM clock, MHz"], a
assert a["ticks"][:2] == ["0", "500"] and all(t.isdigit() for t in a["ticks"]), a
assert a["now"] == ["now " + a["card"] + " MHz"] and a["mhz"] == a["now"], a
PY
[ "$(head -c 4 "$out/proxy_govern_live.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "no PNG"

# A plain proxy: no clock card, no clock line.
"$zeus" proxy --upstream "http://127.0.0.1:$upstream_port" --port 0 --gpus 0 > "$dir/plain.out" 2> "$dir/plain.err" &
pids+=($!)
wait_for "$dir/plain.out" "serving"
plain=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\) in front.*|\1|p' "$dir/plain.out")
hidden=$(cd "$lib" && timeout 60 "$py" - "http://127.0.0.1:$plain" <<'PY'
import sys
from cdp_browser import Browser
with Browser() as b:
    b.open(sys.argv[1] + "/zeus/")
    b.wait_for("document.getElementById('status').textContent === 'live'", what="the page")
    print(b.evaluate("document.getElementById('clock-card').hidden && "
                     "document.querySelectorAll('#chart polyline.clock').length === 0"))
PY
) || fail "the browser run on the plain proxy failed"
[ "$hidden" = True ] || fail "a plain proxy's page shows a clock: $hidden"
echo "the governor on the live page: ok"
