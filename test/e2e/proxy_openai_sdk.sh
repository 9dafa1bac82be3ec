#!/usr/bin/env bash
# OpenAI's own Node client library (the openai package from npm, pinned in test/e2e/node and
# installed there by `make deps`) against zeus proxy in front of the fake OpenAI-compatible server:
# whole answers, streams (with the usage chunk), eight streams at once and the legacy completions
# route come out of the library exactly as they do from the upstream directly, though the proxy
# adds headers, HTTP trailers and (when asked) usage.energy_j and an SSE comment line; the energy
# headers are readable; the proxy's own errors (upstream down: 502; a body over --max-body: 413)
# reach the library's APIError with their message, not "502 status code (no body)".
set -euo pipefail
source "$(dirname "$0")/lib/proxy_lib.sh"

node_dir="$lib/../node"
command -v node > /dev/null || fail "node is not installed: run 'make deps' (nodejs, npm)"
[ -f "$node_dir/node_modules/openai/package.json" ] ||
  fail "OpenAI's Node library is not in $node_dir/node_modules: run 'make deps' (npm ci there)"

start_proxy proxy --gpus 0 --interval 0.05 --io-threads 2  # two loops: the concurrent streams cross them
main_port=$port
PROXY_UPSTREAM=http://127.0.0.1:1 start_proxy down --gpus 0 --max-body 2000  # nothing on port 1
node "$node_dir/proxy_sdk_client.mjs" "$upstream" "$main_port" "$port" 2000 ||
  fail "OpenAI's client library through the proxy (the failed checks are above)"
