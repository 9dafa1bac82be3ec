#!/usr/bin/env bash
# bench/proxy_data_path.sh: what `zeus proxy` costs on the data path, side by side with nginx and
# HAProxy as reverse proxies in front of the same upstream, in one run (issue 50, item 6).
#
#   bench/proxy_data_path.sh [--seconds 5] [--body-kb 80]
#
# The upstream is nginx answering every POST with a fixed completion (no model: the proxies are
# what is measured). Each target (the upstream itself, nginx, HAProxy, zeus proxy on the fake
# NVML) gets the same wrk load: POST /v1/completions with a small JSON body at 1 connection (the
# median latency; "added" is over the upstream's own), at 32 connections (requests/s), and with a
# --body-kb body at 1 connection (the body's read rate: its size over the added time against the
# small body's). Needs nginx, haproxy and wrk (Debian: nginx-light haproxy wrk) and a release
# build (ZEUS_BIN, ZEUS_FAKES: its bin/ and fakes/). Numbers from one machine and one run: the
# ratios between the targets are what holds, not the microseconds.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${ZEUS_BIN:-$ROOT/build/release/bin}
FAKES=${ZEUS_FAKES:-$ROOT/build/release/fakes}
SECONDS_EACH=5
BODY_KB=80
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) SECONDS_EACH=$2; shift 2 ;;
    --body-kb) BODY_KB=$2; shift 2 ;;
    *) echo "usage: $0 [--seconds S] [--body-kb K]" >&2; exit 2 ;;
  esac
done
for tool in nginx haproxy wrk; do
  command -v "$tool" > /dev/null || PATH=$PATH:/usr/sbin
  command -v "$tool" > /dev/null || { echo "$0: needs $tool (apt-get install nginx-light haproxy wrk)" >&2; exit 2; }
done
[ -x "$BIN/zeus" ] || { echo "$0: no $BIN/zeus (make build, or set ZEUS_BIN)" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null; rm -rf "$WORK"' EXIT
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
UP=$(free_port); NGX=$(free_port); HAP=$(free_port)

cat > "$WORK/nginx.conf" <<EOF
daemon on; worker_processes 1; pid $WORK/nginx.pid; error_log $WORK/nginx.err warn;
events { worker_connections 4096; }
http {
  access_log off; client_body_temp_path $WORK/body; proxy_temp_path $WORK/proxy;
  client_max_body_size 16m; client_body_buffer_size 16m;
  server { listen 127.0.0.1:$UP; keepalive_requests 1000000; default_type application/json;
    location / { return 200 '{"id":"cmpl-1","object":"text_completion","model":"m","choices":[{"index":0,"text":"ok","finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}'; } }
  upstream backend { server 127.0.0.1:$UP; keepalive 64; }
  server { listen 127.0.0.1:$NGX; keepalive_requests 1000000;
    location / { proxy_pass http://backend; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_buffering off; } }
}
EOF
nginx -c "$WORK/nginx.conf" -p "$WORK"

cat > "$WORK/haproxy.cfg" <<EOF
global
  maxconn 4096
defaults
  mode http
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  http-reuse always
frontend f
  bind 127.0.0.1:$HAP
  default_backend b
backend b
  server s1 127.0.0.1:$UP
EOF
haproxy -f "$WORK/haproxy.cfg" > "$WORK/haproxy.log" 2>&1 &

/usr/bin/python3 -c 'import json, sys
json.dump({"devices": [{"name": "NVIDIA H100 80GB HBM3", "power_draw_mw": 60000}]}, open(sys.argv[1], "w"))' "$WORK/state.json"
ZEUS_FAKE_NVML_STATE="$WORK/state.json" ZEUS_NVML_PATH="$FAKES/libnvidia-ml.so.1" \
  ZEUS_ROCM_SMI_PATH="$WORK/none.so" ZEUS_POWERCAP_ROOT="$WORK/none" \
  "$BIN/zeus" proxy --upstream "http://127.0.0.1:$UP" --port 0 --gpus 0 > "$WORK/zeus.out" 2> "$WORK/zeus.err" &
for _ in $(seq 100); do grep -q "serving" "$WORK/zeus.out" 2>/dev/null && break; sleep 0.05; done
ZP=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\) in front.*|\1|p' "$WORK/zeus.out")
[ -n "$ZP" ] || { cat "$WORK/zeus.err"; exit 1; }
sleep 0.3

body() {  # the wrk script of a POST whose prompt is N bytes
  cat > "$WORK/post_$1.lua" <<EOF
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"m","max_tokens":1,"prompt":"' .. string.rep("a", $1) .. '"}'
EOF
  echo "$WORK/post_$1.lua"
}
SMALL=$(body 100)
LARGE=$(body $((BODY_KB * 1024)))
# wrk's latency median in µs, and requests/s.
p50_us() { wrk -t1 -c1 -d"${SECONDS_EACH}s" --latency -s "$2" "http://127.0.0.1:$1/v1/completions" \
  | /usr/bin/python3 -c '
import re, sys
text = sys.stdin.read()
m = re.search(r"^\s+50%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
v, unit = float(m.group(1)), m.group(2)
print("%.1f" % (v * {"us": 1, "ms": 1e3, "s": 1e6}[unit]))'; }
rps() { wrk -t2 -c32 -d"${SECONDS_EACH}s" -s "$2" "http://127.0.0.1:$1/v1/completions" \
  | sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p'; }

echo "target,p50_us_small,p50_us_${BODY_KB}kb,requests_per_s_32" > "$WORK/results.csv"
for target in "upstream:$UP" "nginx:$NGX" "haproxy:$HAP" "zeus-proxy:$ZP"; do
  name=${target%%:*}; port=${target##*:}
  small=$(p50_us "$port" "$SMALL"); large=$(p50_us "$port" "$LARGE"); through=$(rps "$port" "$SMALL")
  echo "$name,$small,$large,$through" >> "$WORK/results.csv"
  echo "$name: p50 ${small} µs (small body), ${large} µs (${BODY_KB} KB body); ${through} requests/s at 32 connections" >&2
done
/usr/bin/python3 - "$WORK/results.csv" "$BODY_KB" <<'PY'
import csv, sys
rows = {r["target"]: r for r in csv.DictReader(open(sys.argv[1]))}
kb = float(sys.argv[2])
up = rows["upstream"]
small_key = "p50_us_small"; large_key = [k for k in up if k.startswith("p50_us_") and k != small_key][0]
print("%-11s %12s %14s %16s %14s" % ("target", "added p50", "vs nginx", "requests/s (32)", "body read"))
nginx_added = float(rows["nginx"][small_key]) - float(up[small_key])
nginx_rps = float(rows["nginx"]["requests_per_s_32"])
for name in ("nginx", "haproxy", "zeus-proxy"):
    r = rows[name]
    added = float(r[small_key]) - float(up[small_key])
    added_large = float(r[large_key]) - float(up[large_key])
    extra = added_large - added  # the body's own cost, over the small body's
    rate = "%.0f MB/s" % (kb * 1024 / extra) if extra > 0 else "n/a"
    print("%-11s %9.1f µs %13.2fx %10.0f (%.2fx) %14s" % (
        name, added, added / nginx_added if nginx_added > 0 else float("nan"),
        float(r["requests_per_s_32"]), float(r["requests_per_s_32"]) / nginx_rps, rate))
print("upstream alone: p50 %s µs, %s requests/s at 32 connections" % (up[small_key], up["requests_per_s_32"]))
PY
