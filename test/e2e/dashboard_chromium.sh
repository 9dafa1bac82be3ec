#!/usr/bin/env bash
# The dashboard in a real browser: headless Chromium opens / of a `zeus serve` holding three jobs
# with converged, early-stopped, failed and running trials; after its JavaScript ran, the DOM must
# show every job, the selected job's trial timeline, beliefs and cost chart. A screenshot is saved
# to $ZEUS_BUILD_DIR/test-output/dashboard_chromium.png. Chromium missing is a failure.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir

chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || fail "chromium is not installed; install the Debian package 'chromium' (make deps does)"

dir=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT

printf 'dash-token\n' > "$dir/token"
chmod 600 "$dir/token"
"$zeus" serve --db memory:// --port 0 --token-file "$dir/token" > "$dir/serve.log" 2>&1 &
server_pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(sed -nE 's/^zeus serve: listening on (http:[^ ]+).*/\1/p' "$dir/serve.log")
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { cat "$dir/serve.log" >&2; fail "zeus serve printed no URL"; }
bso=(--server "$url" --token-file "$dir/token")

# Three jobs. bert-squad: a converged default, an early-stopped (cost over beta x min) smaller
# size, a failed trial and one still running. resnet50: one converged trial. gpt2-wiki: none.
"$zeus" bso register "${bso[@]}" --job-id bert-squad --prefix bert- --batch-sizes 8,16,32 \
  --default-batch-size 16 --max-power 300 --gpu-model A100 --target-metric 0.8 > /dev/null
"$zeus" bso register "${bso[@]}" --job-id resnet50-imagenet --prefix resnet50- \
  --batch-sizes 128,256 --default-batch-size 256 --max-power 1200 --gpu-model V100 > /dev/null
"$zeus" bso register "${bso[@]}" --job-id gpt2-wiki --prefix gpt2- --batch-sizes 4,8 \
  --default-batch-size 8 --max-power 400 > /dev/null
trial() {  # job batch_size trial time energy metric epoch
  "$zeus" bso next "${bso[@]}" --job-id "$1" > /dev/null
  "$zeus" bso report "${bso[@]}" --job-id "$1" --batch-size "$2" --trial-number "$3" \
    --time "$4" --energy "$5" --metric "$6" --epoch "$7" > /dev/null
}
trial bert-squad 16 1 100 20000 0.85 3     # converged: cost 25000 J
trial bert-squad 8 2 400 90000 0.5 9       # cost 105000 > 2 x 25000: stopped early
"$zeus" bso next "${bso[@]}" --job-id bert-squad > /dev/null   # trial 3: 32
"$zeus" bso end "${bso[@]}" --job-id bert-squad --batch-size 32 --trial-number 3
"$zeus" bso next "${bso[@]}" --job-id bert-squad > /dev/null   # trial 4: running
trial resnet50-imagenet 256 1 50 40000 0.6 2

flags=(--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --disable-dev-shm-usage
       --user-data-dir="$dir/profile" --virtual-time-budget=5000 --window-size=1280,1400)
timeout 120 "$chromium" "${flags[@]}" --dump-dom "$url/#bert-squad" > "$dir/dom.html" \
  2> "$dir/chromium.log" || { tail -20 "$dir/chromium.log" >&2; fail "chromium --dump-dom failed"; }

check() { grep -q -- "$1" "$dir/dom.html" || { head -c 4000 "$dir/dom.html" >&2; fail "$2"; }; }
check 'data-job-id="bert-squad"' "the jobs list lacks bert-squad"
check 'data-job-id="resnet50-imagenet"' "the jobs list lacks resnet50-imagenet"
check 'data-job-id="gpt2-wiki"' "the jobs list lacks gpt2-wiki"
check 'Job bert-squad' "the selected job's detail is not shown"
check 'pruning round 1' "the trial timeline lacks the stage"
check 'status-converged">converged' "the timeline lacks the converged trial"
check 'status-not_converged">not converged' "the timeline lacks the early-stopped trial"
check 'status-failed">failed' "the timeline lacks the failed trial"
check 'status-dispatched">dispatched' "the timeline lacks the running trial"
check '25000.0' "the converged trial's cost (25000 J) is not shown"
check '<circle' "the cost chart has no points"
check 'class="bar"' "the beliefs have no mean ± spread bars"
grep -q '<div id="error"></div>' "$dir/dom.html" \
  || fail "the page reported an error: $(grep -o '<div id="error">[^<]*' "$dir/dom.html")"
rows=$(grep -o '<tr class="trial">' "$dir/dom.html" | wc -l)
[ "$rows" = 4 ] || fail "expected 4 trial rows for bert-squad, found $rows"
# A trial still running (dispatched) and a failed one have no result
# yet: their cost, epochs, time, energy and metric cells are dashes, not 0.00 / 0 / 0.000.
/usr/bin/python3 - "$dir/dom.html" <<'PY' || fail "a trial without a result shows numbers"
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
for status in ("dispatched", "failed"):
    row = re.search(r'<tr class="trial">((?:(?!</tr>).)*status-' + status + r'.*?)</tr>', dom)
    assert row, status + " row missing"
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))
    assert cells[4:] == ["\u2013"] * 5, (status, cells)
print("dashes for dispatched and failed trials: ok")
PY

out="${ZEUS_BUILD_DIR:-$dir}/test-output"
mkdir -p "$out"
rm -f "$out/dashboard_chromium.png"
timeout 120 "$chromium" "${flags[@]}" --screenshot="$out/dashboard_chromium.png" \
  "$url/#bert-squad" 2>> "$dir/chromium.log" > /dev/null || fail "chromium --screenshot failed"
[ -s "$out/dashboard_chromium.png" ] || fail "no screenshot written"
[ "$(head -c 4 "$out/dashboard_chromium.png" | od -An -c | tr -d ' ')" = '211PNG' ] \
  || fail "the screenshot is not a PNG"
echo "dashboard_chromium: ok, screenshot $out/dashboard_chromium.png"
