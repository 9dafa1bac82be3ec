#!/usr/bin/env bash
# A lease journal with one bad lease still restores every good one. The journal a
# killed zeusd left holds a valid lease of a dead process on GPU 0 (which it left at 300 W) and
# the same lease on GPU 1 twice. The real daemon over the fake libnvidia-ml.so.1 must restore
# GPU 0 and GPU 1, name the duplicate, keep a copy of the journal as found, and rewrite it.
set -euo pipefail
source "${ZEUS_SOURCE_DIR:?}/test/e2e/lib/zeusd_lib.sh"
fake_gpus '{"devices": [
  {"name": "NVIDIA H100 80GB HBM3", "architecture": 9, "min_limit_mw": 200000,
   "max_limit_mw": 700000, "limit_mw": 300000},
  {"name": "NVIDIA H100 80GB HBM3", "architecture": 9, "min_limit_mw": 200000,
   "max_limit_mw": 700000, "limit_mw": 400000}]}'
journal="$dir/zeusd-leases.json"
lease() {  # lease GPU PID: a valid entry (the fake names GPU i GPU-00000000-fake-0000-0000-<i>)
  printf '{"gpu":%s,"gpu_uuid":"GPU-00000000-fake-0000-0000-%012d","pid":%s,"pid_start_ticks":1,"restores":{"power_limit_mw":700000,"sm_clocks_locked":false,"memory_clocks_locked":false},"uid":1001}' "$1" "$1" "$2"
}
printf '{"boot_id":"%s","format":"zeusd-leases","version":1,"leases":[%s,%s,%s]}' \
  "$(cat /proc/sys/kernel/random/boot_id)" "$(lease 0 999999)" "$(lease 1 999998)" \
  "$(lease 1 999998)" > "$journal"
chmod 600 "$journal"
cp "$journal" "$dir/as-found.json"

start_zeusd --socket "$sock" --allow 'gpu-read=*' --log-level info
[ "$(limit 0)" = 700000 ] || fail "GPU 0 was not restored: $(limit 0)"
[ "$(limit 1)" = 700000 ] || fail "GPU 1 was not restored from its first lease: $(limit 1)"
grep -q "restore power limit 700000 mW on GPU 0" "$dir/zeusd.log" || fail "GPU 0's restore not logged"
grep -q "has 1 lease that cannot be used, so it is not restored .*lease 2 (GPU 1, pid 999998): GPU 1 is leased twice (lease 1 holds it already); the other 2 leases are used; the journal as found is kept as $journal.damaged-" \
  "$dir/zeusd.log" || fail "the bad lease is not named"
! grep -q "no lease will restore it" "$dir/zeusd.log" || fail "a GPU was left unrestored"
cmp -s "$journal".damaged-* "$dir/as-found.json" || fail "the copy kept is not the journal as found"
"$py" -c 'import json,sys; assert json.load(open(sys.argv[1]))["leases"] == []' "$journal" \
  || fail "the journal was not rewritten: $(cat "$journal")"
stop_zeusd
echo "zeusd_partial_journal_restores_good_leases: ok"
