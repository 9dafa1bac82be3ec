#!/usr/bin/env bash
# A user who may not open zeusd's socket (not in its group): the
# client's message asks the operator to add them to the socket's group and names the flag as
# `zeusd serve --socket-gid GROUP`, not the deprecated `zeusd --socket-group`.
set -euo pipefail
source "$(dirname "$0")/lib/zeusd_lib.sh"
zeus="$ZEUS_BIN/zeus"

fake_h100_a100
start_zeusd serve --socket-path "$sock" --socket-permissions 0660 --allow 'gpu-read=*'
rc=0
runuser -u nobody -- env ZEUSD_SOCK_PATH="$sock" ZEUS_NVML_PATH="$ZEUS_NVML_PATH" \
  ZEUS_FAKE_NVML_STATE="$ZEUS_FAKE_NVML_STATE" "$zeus" devices > "$dir/devices.out" 2> "$dir/devices.err" || rc=$?
[ "$rc" != 0 ] || fail "nobody read the devices through a 0660 root socket"
grep -q "Permission denied" "$dir/devices.err" || fail "not a permission error: $(cat "$dir/devices.err")"
grep -q "add you to the socket's group (zeusd serve --socket-gid GROUP)" "$dir/devices.err" \
  || fail "the hint does not name zeusd serve --socket-gid: $(cat "$dir/devices.err")"
grep -q -- "--socket-group" "$dir/devices.err" && fail "the deprecated flag: $(cat "$dir/devices.err")"
stop_zeusd
echo "the socket's permission error names zeusd serve --socket-gid: ok"
