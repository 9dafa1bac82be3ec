#!/usr/bin/env bash
# zeusd with ZEUS_NVML_PATH under /root or /home that it cannot open (the packaged unit's
# ProtectHome=yes hides those folders, so the library the operator can see "is not found"): the
# one log line about the NVML backend adds that a systemd sandbox may hide the path. A path
# elsewhere that is missing gets no such hint.
set -euo pipefail
source "$(dirname "$0")/lib/zeusd_lib.sh"

fake_gpus '{"devices": []}'
for hidden in "/root/zeus-e2e-absent-$$/libnvidia-ml.so.1" "/home/zeus-e2e-absent-$$/libnvidia-ml.so.1"; do
  ZEUS_NVML_PATH=$hidden start_zeusd serve --socket-path "$sock" --log-level info
  line=$(grep "backend nvml" "$dir/zeusd.log") || fail "no line about the NVML backend"
  [ "$(echo "$line" | wc -l)" = 1 ] || fail "the NVML backend's message is not one line: $line"
  echo "$line" | grep -q "not found or not loadable" || fail "the NVML error: $line"
  echo "$line" | grep -q "ProtectHome=yes" && echo "$line" | grep -q "systemd sandbox" \
    || fail "no sandbox hint for $hidden: $line"
  echo "$line" | grep -q "may be hidden from zeusd" || fail "the hint: $line"
  stop_zeusd
done
ZEUS_NVML_PATH="$dir/absent/libnvidia-ml.so.1" start_zeusd serve --socket-path "$sock" --log-level info
line=$(grep "backend nvml" "$dir/zeusd.log") || fail "no line about the NVML backend"
echo "$line" | grep -q "ProtectHome" && fail "a path outside /home and /root got the sandbox hint: $line"
stop_zeusd
echo "zeusd's NVML error under /root or /home names the sandbox: ok"
