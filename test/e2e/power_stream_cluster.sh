#!/usr/bin/env bash
# Live power of a "cluster": three zeusd daemons, each over its own fake NVML state (two GPUs),
# streamed by one `zeus power --from` (two over loopback TCP, one over its Unix socket). Power
# changes made at known times reach the client within two poll periods, and per-node and cluster
# energy match the fakes' power x time within 1 %. 10 s by default; ZEUS_STREAM_LONG=1 (or
# --long): 30 s, which the registered ctest runs (test/CMakeLists.txt sets ZEUS_STREAM_LONG=1).
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
long=()
if [ "${ZEUS_STREAM_LONG:-0}" = 1 ] || [ "${1:-}" = --long ]; then long=(--long); fi
/usr/bin/python3 "$(dirname "$0")/lib/power_stream_cluster.py" "$ZEUS_BIN" "$ZEUS_FAKES" "$dir" "${long[@]}"
