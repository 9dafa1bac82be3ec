#!/usr/bin/env bash
# zeusd as packaging/zeusd.service runs it, as far as this machine can without systemd: root with
# only the unit's CapabilityBoundingSet (setpriv: no CAP_DAC_*, no CAP_FOWNER, no CAP_SYS_PTRACE),
# its UMask and no new privileges, with the unit's own ExecStart options (socket group and mode,
# the lease journal in a root-only folder, the allow-list; paths moved to a scratch folder and the
# group zeus replaced by `users`), on the fake NVML and a fake RAPL tree whose energy_uj files are
# root:root 0400 like the kernel's. A member of the socket's group (nobody, with `users` as a
# supplementary group, which zeusd reads from /proc/PID/status) reads /discover and a CPU's
# energy, lowers the power limit and locks SM clocks; killed with SIGKILL, its changes are
# restored; SIGTERM stops zeusd. So the capabilities the unit keeps suffice for what zeusd itself
# does (the NVIDIA driver's own CAP_SYS_ADMIN check needs a real GPU). Needs root.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "zeusd_unit_capabilities: needs root (setpriv)" >&2; exit 1; }
src=${ZEUS_SOURCE_DIR:?} bin=${ZEUS_BIN:?} fakes=${ZEUS_FAKES:?}
unit="$src/packaging/zeusd.service"
fail() { echo "FAIL: $*" >&2; [ -f "$dir/zeusd.log" ] && tail -20 "$dir/zeusd.log" >&2; exit 1; }
group=users
gid=$(getent group "$group" | cut -d: -f3) || { echo "no group $group here" >&2; exit 1; }
dir=$(mktemp -d)
zeusd_pid="" client_pid=""
cleanup() {
  [ -z "$client_pid" ] || kill -KILL "$client_pid" 2>/dev/null || true
  [ -z "$zeusd_pid" ] || kill -KILL "$zeusd_pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
chmod 0711 "$dir"  # nobody reaches the socket's folder
mkdir -m 0755 "$dir/run"
mkdir -m 0700 "$dir/state"

# The unit's sandbox settings and ExecStart, read from the file.
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit")
umask_value=$(sed -n 's/^UMask=//p' "$unit")
[ -n "$caps" ] && [ -n "$umask_value" ] || fail "no CapabilityBoundingSet= or UMask= in $unit"
grep -qx "NoNewPrivileges=yes" "$unit" || fail "NoNewPrivileges=yes is not in $unit"
bounding="-all"
for cap in $caps; do bounding+=",+$(tr '[:upper:]' '[:lower:]' <<< "${cap#CAP_}")"; done
exec_line=$(sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" | sed 's/\\$//; s/^ExecStart=//' | tr '\n' ' ' \
  | sed "s|/run/zeusd/zeusd.sock|$dir/run/zeusd.sock|; s|/var/lib/zeusd/|$dir/state/|; s|--socket-gid zeus|--socket-gid $group|; s|@zeus|@$group|g")
read -r -a exec_start <<< "$exec_line"
[ "${exec_start[1]:-}" = serve ] || fail "the unit's ExecStart: ${exec_start[*]}"
exec_start[0]="$bin/zeusd"
echo "zeusd with bounding set $caps ($bounding), UMask=$umask_value: ${exec_start[*]:1}"

# The fakes: one GPU; RAPL package 0 with DRAM, its counters root-only.
echo '{"devices": [{"name": "NVIDIA H100 80GB HBM3"}]}' > "$dir/nvml.json"
rapl="$dir/powercap/intel-rapl:0"
mkdir -p "$rapl/intel-rapl:0:0"
echo package-0 > "$rapl/name"; echo 1000000 > "$rapl/energy_uj"; echo 262143328850 > "$rapl/max_energy_range_uj"
echo dram > "$rapl/intel-rapl:0:0/name"; echo 2000000 > "$rapl/intel-rapl:0:0/energy_uj"
echo 65532610987 > "$rapl/intel-rapl:0:0/max_energy_range_uj"
chmod 0400 "$rapl/energy_uj" "$rapl/intel-rapl:0:0/energy_uj"

( umask "$umask_value"
  exec env ZEUS_NVML_PATH="$fakes/libnvidia-ml.so.1" ZEUS_FAKE_NVML_STATE="$dir/nvml.json" \
    ZEUS_POWERCAP_ROOT="$dir/powercap" \
    setpriv --bounding-set "$bounding" --inh-caps=-all --no-new-privs "${exec_start[@]}" ) \
  > /dev/null 2> "$dir/zeusd.log" &
zeusd_pid=$!
for _ in $(seq 200); do grep -q "zeusd: serving" "$dir/zeusd.log" && break; sleep 0.05; done
grep -q "zeusd: serving" "$dir/zeusd.log" || fail "zeusd did not start under the unit's limits"
effective=$(sed -n 's/^CapEff:\t//p' "/proc/$zeusd_pid/status")
expected=$(setpriv --bounding-set "$bounding" --inh-caps=-all sed -n 's/^CapEff:\t//p' /proc/self/status)
[ "$effective" = "$expected" ] || fail "zeusd's effective capabilities $effective, expected $expected"
sock="$dir/run/zeusd.sock"
[ "$(stat -c '%a %U %G' "$sock")" = "660 root $group" ] || fail "the socket: $(stat -c '%a %U %G' "$sock")"
echo "serving: capabilities $effective (only the unit's), socket 0660 root:$group"

cat > "$dir/client.py" <<'PY'
import http.client, json, socket, sys, time
class Unix(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX); self.sock.connect(sys.argv[1])
def call(method, path, body=None):
    c = Unix("zeusd", timeout=5)
    c.request(method, path, json.dumps(body) if body is not None else None)
    r = c.getresponse(); text = r.read().decode()
    return r.status, text
if sys.argv[2] == "read":  # GET PATH, print the body
    status, text = call("GET", sys.argv[3]); assert status == 200, (status, text); print(text); sys.exit()
for method, path, body in [
        ("GET", "/discover", None),
        ("GET", "/cpu/get_cumulative_energy?cpu_ids=0&cpu=true&dram=true", None),
        ("POST", "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000&block=true", None),
        ("POST", "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=1200&max_clock_mhz=1200&block=true",
         None)]:
    status, text = call(method, path, body)
    print(method, path, status, text[:160].replace("\n", " "), flush=True)
    assert status == 200, (method, path, status, text)
print("changed", flush=True)
time.sleep(120)
PY
# RAPL's counters move: zeusd must read the root-only files again (5 J of package, 1 J of DRAM).
echo 6000000 > "$rapl/energy_uj"; echo 3000000 > "$rapl/intel-rapl:0:0/energy_uj"
setpriv --reuid=nobody --regid=nogroup --groups="$gid" /usr/bin/python3 "$dir/client.py" "$sock" change \
  > "$dir/client.out" 2>&1 &
client_pid=$!
for _ in $(seq 100); do grep -q "^changed" "$dir/client.out" && break; kill -0 "$client_pid" 2>/dev/null || break; sleep 0.05; done
cat "$dir/client.out"
grep -q "^changed" "$dir/client.out" || fail "nobody (group $group) could not use zeusd"
grep -q '"cpu_energy_uj":6000000,"dram_energy_uj":3000000' "$dir/client.out" \
  || fail "the RAPL counters (root:root 0400) were not read: $(grep cpu "$dir/client.out")"
read_as_root() { /usr/bin/python3 "$dir/client.py" "$sock" read "$1"; }
read_as_root /leases | grep -q '"uid": *65534' || fail "no lease for nobody: $(read_as_root /leases)"
kill -KILL "$client_pid"; wait "$client_pid" 2>/dev/null || true; client_pid=""
for _ in $(seq 100); do
  /usr/bin/python3 - "$dir/nvml.json" <<'PY' && break
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
sys.exit(0 if d["limit_mw"] == d["default_limit_mw"] and d.get("locked_sm_clocks_mhz") is None else 1)
PY
  sleep 0.05
done
/usr/bin/python3 - "$dir/nvml.json" <<'PY' || fail "nobody's changes were not restored after SIGKILL"
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
assert d["limit_mw"] == d["default_limit_mw"] and d.get("locked_sm_clocks_mhz") is None, d
print("after nobody's SIGKILL: power limit back to %d W, SM clocks unlocked" % (d["limit_mw"] // 1000))
PY
[ "$(stat -c '%a' "$dir/state/zeusd-leases.json")" = 600 ] || fail "the journal's mode: $(stat -c '%a' "$dir/state/zeusd-leases.json")"
kill -TERM "$zeusd_pid"
rc=0; wait "$zeusd_pid" || rc=$?; zeusd_pid=""
[ "$rc" = 0 ] || fail "zeusd exited with $rc on SIGTERM"
if grep -Ei "permission denied|operation not permitted" "$dir/zeusd.log"; then fail "zeusd met a permission error (above)"; fi
echo "zeusd under the unit's capabilities: served, leased, restored and stopped cleanly"
