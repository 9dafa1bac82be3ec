#!/usr/bin/env bash
# An operator migrating from upstream zeusd (issue 37): zeusd over a real socket on the fake NVML,
# driven with curl the way upstream's prolog/epilog scripts do.
# 1. Upstream's `--socket-permissions 666` without --allow: zeusd warns at start that only root
#    may change GPUs and names the flag; a non-root caller's 403 names `zeusd serve --allow`.
# 2. `--upstream-changes lease` (the default): a one-shot curl's limit is undone when curl exits;
#    X-Zeusd-Persist is refused with the option to ask for.
# 3. `--upstream-changes persist`: the prolog's curl sets a limit that stays after curl exits
#    (listed under "persistent" in GET /leases) until the epilog's reset, a set back to the
#    default, which also ends its entry.
# 4. `--upstream-changes on-request`: leased unless the request says X-Zeusd-Persist: 1.
# Each start says the policy in force.
set -euo pipefail
zeusd="$ZEUS_BIN/zeusd"
py=/usr/bin/python3
dir=$(mktemp -d)
chmod 755 "$dir"
zeusd_pid=""
stop_zeusd() {
  if [ -n "$zeusd_pid" ]; then kill -TERM "$zeusd_pid" 2>/dev/null || true; wait "$zeusd_pid" 2>/dev/null || true; fi
  zeusd_pid=""
}
cleanup() { stop_zeusd; rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$dir/zeusd.log" ] && tail -20 "$dir/zeusd.log" >&2; exit 1; }

cat > "$dir/state.json" <<'JSON'
{"devices": [
  {"name": "NVIDIA H100 80GB HBM3", "architecture": 9, "power_draw_mw": 350000,
   "min_limit_mw": 200000, "max_limit_mw": 700000}]}
JSON
chmod 644 "$dir/state.json"
export ZEUS_FAKE_NVML_STATE="$dir/state.json"
export ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so" ZEUS_AMDSMI_PATH="$dir/none.so"
export ZEUS_POWERCAP_ROOT="$dir/no-powercap"
unset CUDA_VISIBLE_DEVICES ZEUSD_SOCK_PATH
sock="$dir/zeusd.sock"

limit() {
  "$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))["devices"][0]; print(d.get("limit_mw", d.get("default_limit_mw", d["max_limit_mw"])))' "$dir/state.json"
}
wait_limit() {  # wait_limit MW: true when GPU 0's limit becomes MW within 2 s
  for _ in $(seq 100); do [ "$(limit)" = "$1" ] && return 0; sleep 0.02; done
  [ "$(limit)" = "$1" ]
}
start() {  # start [zeusd serve args...]
  "$zeusd" serve --socket-path "$sock" --lease-journal none --log-level info "$@" \
    > "$dir/zeusd.out" 2> "$dir/zeusd.log" &
  zeusd_pid=$!
  for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
  [ -S "$sock" ] || fail "zeusd did not create $sock"
}
# The prolog's one-shot: upstream's route, one curl process that exits at once.
prolog() {  # prolog MW [curl args...] -> "BODY STATUS"
  local mw=$1; shift
  curl -s --unix-socket "$sock" -X POST "$@" -w ' %{http_code}' \
    "http://zeusd/gpu/set_power_limit?gpu_ids=0&power_limit_mw=$mw&block=true"
}

# 1. Upstream's socket permissions without --allow.
start --socket-permissions 666
grep -q "zeusd warning: the socket is open to other users (--socket-permissions 666) but no --allow names any: only root may change GPUs" "$dir/zeusd.log" \
  || fail "no warning about an open socket that allows nobody"
grep -q -- "--allow gpu-control=" "$dir/zeusd.log" || fail "the warning names no --allow"
out=$(runuser -u nobody -- curl -s --unix-socket "$sock" -X POST -w ' %{http_code}' \
  "http://zeusd/gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000&block=true")
[ "${out##* }" = 403 ] || fail "nobody got '$out', expected 403"
echo "$out" | grep -q "zeusd serve --allow" || fail "the 403 does not name zeusd serve --allow: $out"
grep -q "changes through upstream's routes on the socket are tied to the calling process" "$dir/zeusd.log" \
  || fail "the default policy is not said at start"

# 2. The default: leased to curl, undone when it exits; the header is refused, naming the option.
out=$(prolog 300000)
[ "${out##* }" = 200 ] || fail "prolog under lease: $out"
wait_limit 700000 || fail "under lease the limit was not restored after curl exited: $(limit)"
out=$(prolog 300000 -H "X-Zeusd-Persist: 1")
[ "${out##* }" = 400 ] && echo "$out" | grep -q -- "--upstream-changes on-request" \
  || fail "X-Zeusd-Persist under lease: $out"
[ "$(limit)" = 700000 ] || fail "a refused request changed the limit"
stop_zeusd

# 3. persist: the prolog's limit stays after curl exits, until the epilog resets it.
start --socket-permissions 660 --upstream-changes persist
grep -q "persist until reset, as upstream zeusd's (--upstream-changes persist)" "$dir/zeusd.log" \
  || fail "the persist policy is not said at start"
grep -q "the socket is open to other users" "$dir/zeusd.log" && fail "warned about a 660 socket"
out=$(prolog 300000)
[ "${out##* }" = 200 ] || fail "prolog under persist: $out"
sleep 1
[ "$(limit)" = 300000 ] || fail "under persist the limit did not stay after curl exited: $(limit)"
leases=$(curl -s --unix-socket "$sock" http://zeusd/leases)
echo "$leases" | "$py" -c 'import json,sys; d=json.load(sys.stdin); p=d["persistent"]; assert len(p)==1 and p[0]["gpu"]==0 and "300" in p[0]["changed"], d' \
  || fail "GET /leases does not list the persistent change: $leases"
grep -q "kept until reset, not restored when the caller exits" "$dir/zeusd.log" || fail "the change's log line"
# The epilog: upstream's reset is the maximum power limit, again with one curl.
out=$(prolog 700000)
[ "${out##* }" = 200 ] || fail "epilog: $out"
[ "$(limit)" = 700000 ] || fail "the epilog did not reset the limit: $(limit)"
# ... and, the limit back at its default, GET /leases no longer lists it (it once stayed listed
# as "set power limit 300000 -> 700000 mW" until a DELETE).
leases=$(curl -s --unix-socket "$sock" http://zeusd/leases)
echo "$leases" | "$py" -c 'import json,sys; d=json.load(sys.stdin); assert d["persistent"]==[], d' \
  || fail "the epilog's reset to the default left the change listed: $leases"
stop_zeusd
[ "$(limit)" = 700000 ] || fail "stopping zeusd changed the limit"

# 4. on-request: leased by default, persistent with the header; a bad header value is a 400.
start --upstream-changes on-request
grep -q "unless the request says 'X-Zeusd-Persist: 1' (--upstream-changes on-request)" "$dir/zeusd.log" \
  || fail "the on-request policy is not said at start"
out=$(prolog 250000)
[ "${out##* }" = 200 ] || fail "prolog without the header: $out"
wait_limit 700000 || fail "on-request without the header was not leased: $(limit)"
out=$(prolog 250000 -H "X-Zeusd-Persist: yes please")
[ "${out##* }" = 400 ] && echo "$out" | grep -q "X-Zeusd-Persist is 1 or 0" || fail "bad header value: $out"
out=$(prolog 250000 -H "X-Zeusd-Persist: 1")
[ "${out##* }" = 200 ] || fail "prolog with the header: $out"
sleep 1
[ "$(limit)" = 250000 ] || fail "on-request with the header did not persist: $(limit)"
out=$(prolog 700000 -H "X-Zeusd-Persist: 1")
[ "$(limit)" = 700000 ] || fail "reset with the header: $(limit)"
stop_zeusd

# A value the option does not know: refused before anything starts.
set +e
"$zeusd" serve --socket-path "$dir/c.sock" --upstream-changes forever > /dev/null 2> "$dir/bad.txt"
rc=$?
set -e
[ "$rc" != 0 ] && grep -q "upstream-changes" "$dir/bad.txt" || fail "--upstream-changes forever: rc $rc $(cat "$dir/bad.txt")"
echo "PASS: zeusd for upstream operators (warning, lease, persist, on-request)"
