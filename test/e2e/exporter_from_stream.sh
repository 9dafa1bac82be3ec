#!/usr/bin/env bash
# zeus exporter --from: two zeusd daemons (fake NVML states, one over TCP, one over its socket,
# both checking tokens) served to Prometheus by one exporter: per-node GPU gauges follow a power
# change within a few poll periods, the cluster gauge is the nodes' sum, energy counters match
# power x time within 3 %, and a killed daemon reads as disconnected while the exporter serves on.
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
/usr/bin/python3 "$(dirname "$0")/lib/exporter_from_stream.py" "$ZEUS_BIN" "$ZEUS_FAKES" "$dir"
