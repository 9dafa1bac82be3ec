#!/usr/bin/env bash
# `zeus power --from HOST:PORT` against a zeusd that checks tokens:
# without ZEUSD_TOKEN, or with one zeusd does not accept, its streams answer 401, and retrying
# cannot help (the token comes from the environment): it stops at once, exit status 1, with a
# message naming ZEUSD_TOKEN, instead of a row of "down" and a warning per stream every second
# for the whole --duration. With a good token it streams as before.
set -euo pipefail
source "$(dirname "$0")/lib/zeusd_lib.sh"
zeus="$ZEUS_BIN/zeus"

fake_h100_a100
key="$dir/signing.key"
head -c 32 /dev/urandom | base64 > "$key"
chmod 600 "$key"
start_zeusd serve --mode both --socket-path "$sock" --tcp-bind-address 127.0.0.1:0 \
  --signing-key-path "$key" --allow 'gpu-read=*' --log-level info
port=$(sed -n 's/.*and on 127.0.0.1:\([0-9]*\).*/\1/p' "$dir/zeusd.log" | head -1)
[ -n "$port" ] || fail "no TCP port in the startup line"

# run_power NAME [ENV...]: zeus power --from for up to 10 s; sets $rc and $took_ms.
run_power() {
  local name=$1; shift
  local start=$(date +%s%N)
  rc=0
  env "$@" timeout 30 "$zeus" power --from "127.0.0.1:$port" --duration 10 \
    > "$dir/$name.out" 2> "$dir/$name.err" || rc=$?
  took_ms=$(( ($(date +%s%N) - start) / 1000000 ))
}

run_power none
[ "$rc" = 1 ] || fail "without a token: exit status $rc, want 1: $(cat "$dir/none.err")"
[ "$took_ms" -lt 5000 ] || fail "without a token it took $took_ms ms to stop (--duration 10)"
grep -q "ZEUSD_TOKEN" "$dir/none.err" || fail "the 401 names no ZEUSD_TOKEN: $(cat "$dir/none.err")"
grep -q "refused the request without a token" "$dir/none.err" || fail "the 401: $(cat "$dir/none.err")"
warnings=$(grep -c "power stream of" "$dir/none.err" || true)
[ "$warnings" -le 2 ] || fail "$warnings stream warnings before it stopped: $(cat "$dir/none.err")"
grep -q "down" "$dir/none.out" && fail "rows of 'down' were printed: $(cat "$dir/none.out")"

run_power bad ZEUSD_TOKEN=not.a.token
[ "$rc" = 1 ] || fail "with a bad token: exit status $rc, want 1: $(cat "$dir/bad.err")"
grep -q "refused the token in ZEUSD_TOKEN" "$dir/bad.err" || fail "the bad token's 401: $(cat "$dir/bad.err")"

good=$("$zeusd" token issue --signing-key-path "$key" --user alice --scope gpu-read --expires 1h)
rc=0
ZEUSD_TOKEN=$good timeout 30 "$zeus" power --from "127.0.0.1:$port" --duration 1.5 \
  > "$dir/good.out" 2> "$dir/good.err" || rc=$?
[ "$rc" = 0 ] || fail "with a good token: exit status $rc: $(cat "$dir/good.err")"
grep -q "cluster:" "$dir/good.out" || fail "with a good token, no totals: $(cat "$dir/good.out")"
grep -q "ZEUSD_TOKEN" "$dir/good.err" && fail "a good token was refused: $(cat "$dir/good.err")"
echo "zeus power --from on a 401: ok"
