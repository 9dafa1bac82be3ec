#!/usr/bin/env bash
# zeusd serve with a signing key, on the Unix socket and TCP (127.0.0.1) at once, over the fake
# libnvidia-ml.so.1 and a fake powercap tree, with real HTTP (curl): tokens from `zeusd token
# issue`; every path but /discover and /time refused without one (401 + WWW-Authenticate), for a
# malformed header, another key, alg none, HS512, an expired or future-dated (nbf, iat) token and
# an unknown scope; 403 for a missing scope; whoami; every upstream route over TCP with a token; a
# TCP change persists and is listed with the token's subject; the socket needs the token too;
# --enable turns groups off (404 before authentication); an oversized header is 431; 1,000 idle
# TCP connections leave other clients served.
set -euo pipefail
source "$(dirname "$0")/lib/zeusd_lib.sh"

fake_h100_a100
fake_rapl 123456789 5555

key="$dir/signing.key"
head -c 32 /dev/urandom | base64 > "$key"   # the newline base64 writes is part of the key
chmod 600 "$key"
issue() { "$zeusd" token issue --signing-key-path "$key" --user "$1" --scope "$2" --expires "$3"; }
all=$(issue alice gpu-control,gpu-read,cpu-read 1h)
reader=$(issue bob gpu-read 7d)
forever=$(issue carol cpu-read never)
# A token without expiry ("0" as upstream, or "never") is said to be one.
zero_err=$("$zeusd" token issue --signing-key-path "$key" --user dave --scope cpu-read --expires 0 2>&1 >/dev/null)
echo "$zero_err" | grep -q "never expires" || fail "--expires 0 issued a token without a warning: '$zero_err'"
[ "$(echo "$all" | tr -cd . | wc -c)" = 2 ] || fail "zeusd token issue printed '$all'"

# Usage errors name the fix.
if out=$("$zeusd" token issue --signing-key-path "$key" --user x --scope gpu-write --expires 1h 2>&1); then
  fail "an unknown scope was issued"; fi
echo "$out" | grep -q "gpu-control" || fail "unknown scope message: $out"
if out=$("$zeusd" token issue --signing-key-path "$key" --user x --scope gpu-read --expires soon 2>&1); then
  fail "a bad lifetime was accepted"; fi
echo "$out" | grep -q "7d" || fail "bad lifetime message: $out"

start_zeusd serve --mode both --socket-path "$sock" --socket-permissions 0666 \
  --tcp-bind-address 127.0.0.1:0 --signing-key-path "$key" --allow 'gpu-read=*' --log-level info
port=$(sed -n 's/.*and on 127.0.0.1:\([0-9]*\).*/\1/p' "$dir/zeusd.log" | head -1)
[ -n "$port" ] || fail "no TCP port in the startup line"
base="http://127.0.0.1:$port"

# tcp METHOD TARGET [TOKEN]: prints "BODY STATUS"; tcp_h: also the response headers.
tcp() { curl -s -X "$1" ${3:+-H "Authorization: Bearer $3"} -w ' %{http_code}' "$base$2"; }
check() {  # check WANT_STATUS METHOD TARGET [TOKEN]
  local out; out=$(tcp "$2" "$3" "${4:-}")
  [ "${out##* }" = "$1" ] || fail "$2 $3: want $1, got: $out"
}
pyjson() { "$py" -c "import json,sys; t=sys.stdin.read().strip().rsplit(' ',1); d=json.loads(t[0]) if t[0] else None; s=int(t[1]); $1"; }

# Open without a token: /discover (auth_required) and /time.
tcp GET /discover | pyjson "assert s==200 and d['auth_required'] is True and d['enabled_api_groups']==['gpu-control','gpu-read','cpu-read'], d" \
  || fail "/discover over TCP"
check 200 GET /time

# Refused: 401 with the challenge for no token, a malformed header, other key, none, HS512, expired.
headers=$(curl -s -D - -o /dev/null "$base/gpu/get_power_limit")
echo "$headers" | grep -q '^HTTP/1.1 401' || fail "no token: $headers"
echo "$headers" | grep -qi '^WWW-Authenticate: Bearer realm="zeusd"' || fail "no challenge: $headers"
out=$(curl -s -H "Authorization: Basic YWxpY2U6cHc=" -w ' %{http_code}' "$base/gpu/get_power_limit")
[ "${out##* }" = 401 ] || fail "Basic auth: $out"
forged() {  # forged ALG KEYFILE CLAIMS: a token made outside zeusd (Python's hmac)
  "$py" - "$1" "$2" "$3" <<'PY'
import base64, hashlib, hmac, json, sys
alg, keyfile, claims = sys.argv[1], sys.argv[2], sys.argv[3]
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
head = b64(json.dumps({"alg": alg, "typ": "JWT"}).encode()) + "." + b64(claims.encode())
key = open(keyfile, "rb").read() if keyfile != "-" else b""
digest = {"HS256": hashlib.sha256, "HS512": hashlib.sha512}.get(alg)
print(head + "." + (b64(hmac.new(key, head.encode(), digest).digest()) if digest else ""))
PY
}
echo "another key" > "$dir/other.key"
now=$(date +%s)
claims='{"sub":"mallory","scopes":["gpu-control","gpu-read","cpu-read"]}'
# The control: a token made outside zeusd with the right key and HS256 is accepted.
check 200 GET /gpu/get_power_limit "$(forged HS256 "$key" "$claims")"
for bad in "$(forged HS256 "$dir/other.key" "$claims")" "$(forged none - "$claims")" \
           "$(forged HS512 "$key" "$claims")" \
           "$(forged HS256 "$key" "{\"sub\":\"m\",\"scopes\":[\"gpu-read\"],\"exp\":$((now - 120))}")" \
           "$(forged HS256 "$key" '{"sub":"m","scopes":["gpu-read","root"]}')" "not-a-jwt"; do
  out=$(tcp GET /gpu/get_power_limit "$bad")
  [ "${out##* }" = 401 ] || fail "a bad token got: $out ($bad)"
done
tcp GET /gpu/get_power_limit "$(forged HS256 "$key" "{\"sub\":\"m\",\"scopes\":[\"gpu-read\"],\"exp\":$((now - 120))}")" \
  | grep -q '"Token has expired."' || fail "expired message"
# Within the 60 s leeway it still works.
check 200 GET /gpu/get_power_limit "$(forged HS256 "$key" "{\"sub\":\"m\",\"scopes\":[\"gpu-read\"],\"exp\":$((now - 30))}")"
# Dated in the future (unlike upstream; RFC 7519 4.1.5): an nbf or iat more than 60 s ahead is
# 401 with the challenge and a message naming the date and the clocks; within 60 s it works.
for claim in nbf iat; do
  future=$(forged HS256 "$key" "{\"sub\":\"m\",\"scopes\":[\"gpu-read\"],\"$claim\":$((now + 3600))}")
  headers=$(curl -s -D - -o "$dir/future.out" -H "Authorization: Bearer $future" "$base/gpu/get_power_limit")
  echo "$headers" | grep -q '^HTTP/1.1 401' || fail "future $claim: $headers $(cat "$dir/future.out")"
  echo "$headers" | grep -qi '^WWW-Authenticate: Bearer realm="zeusd"' || fail "future $claim: no challenge: $headers"
  when=$(date -u -d "@$((now + 3600))" +%Y-%m-%dT%H:%M:%SZ)
  grep -q "$when (its \`$claim\`; this zeusd's clock says .*check this machine's and the issuer's clocks" "$dir/future.out" \
    || fail "future $claim message: $(cat "$dir/future.out")"
  check 200 GET /gpu/get_power_limit "$(forged HS256 "$key" "{\"sub\":\"m\",\"scopes\":[\"gpu-read\"],\"$claim\":$((now + 30))}")"
done
grep -q '"Token is not valid before ' "$dir/future.out" && fail "iat message reads as nbf's"
tcp GET /gpu/get_power_limit "$(forged HS256 "$key" "{\"sub\":\"m\",\"scopes\":[\"gpu-read\"],\"nbf\":$((now + 3600))}")" \
  | grep -q '"Token is not valid before ' || fail "nbf message"

# 403: the scope is missing.
out=$(tcp POST "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000&block=true" "$reader")
[ "${out##* }" = 403 ] && echo "$out" | grep -q "lacks required scope 'gpu-control'" || fail "reader's write: $out"
check 403 GET /cpu/get_power "$reader"

# whoami
tcp GET /auth/whoami "$all" | pyjson "assert s==200 and d['sub']=='alice' and d['scopes']==['gpu-control','gpu-read','cpu-read'] and d['exp']>$now, d" \
  || fail "whoami"
tcp GET /auth/whoami "$forever" | pyjson "assert s==200 and d=={'sub':'carol','scopes':['cpu-read']}, d" || fail "whoami without exp"

# Every upstream route over TCP with a token.
state() { "$py" -c "import json,sys; d=json.load(open(sys.argv[1]))['devices']; print($1)" "$dir/state.json"; }
tcp GET "/gpu/get_power_limit?gpu_ids=0,1" "$all" | pyjson "assert s==200 and d=={'0':{'power_limit_mw':700000},'1':{'power_limit_mw':400000}}, d" || fail get_power_limit
tcp GET /gpu/get_power_limit_constraints "$all" | pyjson "assert s==200 and d['1']=={'min_power_limit_mw':100000,'max_power_limit_mw':400000}, d" || fail constraints
tcp GET /gpu/get_persistence_mode "$all" | pyjson "assert s==200 and d['0']=={'enabled':False}, d" || fail persistence
tcp GET "/gpu/get_cumulative_energy?gpu_ids=0" "$all" | pyjson "assert s==200 and 'energy_mj' in d['0'], d" || fail energy
tcp GET /gpu/get_power "$all" | pyjson "assert s==200 and d['power_mw']['0']==350000, d" || fail get_power
tcp GET /cpu/get_cumulative_energy"?cpu=true&dram=true" "$all" | pyjson "assert s==200 and d['0']['cpu_energy_uj']>=123456789, d" || fail cpu energy
tcp GET /cpu/get_power "$all" | pyjson "assert s==200 and 'cpu_mw' in d['power_mw']['0'], d" || fail cpu power
check 200 POST "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000&block=true" "$all"
check 200 POST "/gpu/set_persistence_mode?gpu_ids=0&enabled=true&block=true" "$all"
check 200 POST "/gpu/set_gpu_locked_clocks?gpu_ids=1&min_clock_mhz=900&max_clock_mhz=1400&block=true" "$all"
check 200 POST "/gpu/set_mem_locked_clocks?gpu_ids=1&min_clock_mhz=1593&max_clock_mhz=1593&block=true" "$all"
[ "$(state "d[0]['limit_mw'], d[0]['persistence'], d[1].get('locked_sm_clocks_mhz'), d[1].get('locked_memory_clocks_mhz')")" = "300000 True [900, 1400] [1593, 1593]" ] \
  || fail "after the TCP writes: $(state d)"
check 200 POST "/gpu/reset_gpu_locked_clocks?gpu_ids=1&block=true" "$all"
check 200 POST "/gpu/reset_mem_locked_clocks?gpu_ids=1&block=true" "$all"
check 200 POST "/gpu/reset_locked_clocks?gpu_ids=1&block=true" "$all"
[ "$(state "d[1].get('locked_sm_clocks_mhz'), d[1].get('locked_memory_clocks_mhz')")" = "None None" ] || fail "clocks after reset: $(state 'd[1]')"
# Over TCP nothing is leased: the changes persist after curl exits, listed with the subject.
sleep 0.3
[ "$(state "d[0]['limit_mw'], d[0]['persistence']")" = "300000 True" ] || fail "TCP change did not persist: $(state 'd[0]')"
tcp GET /leases "$all" | pyjson "assert s==200 and d['leases']==[] and sorted((p['gpu'],p['knob'],p['subject']) for p in d['persistent'])==[(0,'persistence_mode','alice'),(0,'power_limit','alice')], d" \
  || fail "/leases: $(tcp GET /leases "$all")"
grep -q "token user 'alice'" "$dir/zeusd.log" || fail "the log does not name the token's user"

# The Unix socket needs the token too; with it, the allow-list (gpu-read=*) applies as before.
out=$(api GET /gpu/get_power_limit)
[ "${out##* }" = 401 ] || fail "socket without token: $out"
out=$(curl -s --unix-socket "$sock" -H "Authorization: Bearer $reader" -w ' %{http_code}' http://zeusd/gpu/get_power_limit)
[ "${out##* }" = 200 ] || fail "socket with token: $out"

# Oversized header (20 KiB token): 431, and zeusd keeps serving.
big=$(head -c 20000 /dev/zero | tr '\0' a)
out=$(tcp GET /gpu/get_power_limit "$big")
[ "${out##* }" = 431 ] || fail "oversized header: $out"

# 1,000 idle TCP connections: another client is still answered, promptly.
"$py" - "$port" "$base" "$reader" > "$dir/idle.out" 2>&1 <<'PY' || { cat "$dir/idle.out" >&2; fail "idle connections"; }
import resource, socket, sys, time, urllib.request
port, base, token = int(sys.argv[1]), sys.argv[2], sys.argv[3]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
idle = []
for _ in range(1000):
    s = socket.create_connection(("127.0.0.1", port))
    idle.append(s)
time.sleep(0.5)
start = time.monotonic()
req = urllib.request.Request(base + "/gpu/get_power_limit", headers={"Authorization": "Bearer " + token})
with urllib.request.urlopen(req, timeout=10) as r:
    assert r.status == 200, r.status
took = time.monotonic() - start
print(f"answered in {took*1000:.1f} ms beside 1000 idle connections")
assert took < 5, took
PY
cat "$dir/idle.out"
kill -0 "$zeusd_pid" || fail "zeusd died"
check 200 GET /time
stop_zeusd
# A clean stop does not restore TCP changes (no lease): they persist, as upstream's do.
[ "$(state "d[0]['limit_mw']")" = 300000 ] || fail "a stop restored a TCP change"

# --enable: disabled groups answer 404 before authentication; /discover lists what is served.
start_zeusd serve --mode tcp --tcp-bind-address 127.0.0.1:0 --signing-key-path "$key" --enable gpu-read
port=$(sed -n 's/.* on 127.0.0.1:\([0-9]*\).*/\1/p' "$dir/zeusd.log" | head -1)
base="http://127.0.0.1:$port"
tcp GET /cpu/get_power | pyjson "assert s==404 and d=={'error':\"API group 'cpu-read' is not enabled on this server.\"}, d" || fail "disabled cpu-read"
tcp POST "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000&block=true" | pyjson "assert s==404 and 'gpu-control' in d['error'], d" || fail "disabled gpu-control"
check 401 GET /gpu/get_power
tcp GET /discover | pyjson "assert s==200 and d['enabled_api_groups']==['gpu-read'], d" || fail "discover groups"
stop_zeusd

# The old invocation still works, with a note.
start_zeusd --socket "$sock" --allow 'gpu-read=*'
grep -q "deprecated; run \`zeusd serve" "$dir/zeusd.log" || fail "no deprecation note"
out=$(api GET /gpu/get_power_limit)
[ "${out##* }" = 200 ] || fail "old invocation: $out"
stop_zeusd
echo "PASS: tokens, scopes, groups and every upstream route over TCP and the socket"
