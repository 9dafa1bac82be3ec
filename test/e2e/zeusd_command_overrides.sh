#!/usr/bin/env bash
# zeusd's GPU command overrides (--gpu-command-overrides): every write operation through a small
# script that records its arguments (upstream's query-string routes), the driver left
# alone for what has no override, a lease restored through the commands after its client is
# SIGKILLed, a command that fails, one whose output matches error_pattern, one that times out,
# and a file that others could have written refused at start.
set -euo pipefail
source "${ZEUS_SOURCE_DIR:?}/test/e2e/lib/zeusd_lib.sh"

fake_gpus '{"devices": [{"name": "NVIDIA H100 80GB HBM3", "architecture": 9, "min_limit_mw": 200000,
  "max_limit_mw": 700000, "limit_mw": 700000, "memory_clocks_mhz": [2619, 1593],
  "graphics_clocks_mhz": [1980, 1500, 900]},
 {"name": "NVIDIA H100 80GB HBM3", "architecture": 9, "min_limit_mw": 200000,
  "max_limit_mw": 700000, "limit_mw": 700000, "memory_clocks_mhz": [2619, 1593],
  "graphics_clocks_mhz": [1980, 1500, 900]}]}'
cat > "$dir/record.sh" <<SH
#!/bin/sh
echo "\$@" >> "$dir/calls.log"
case "\$1" in
  slow) sleep 10 ;;
  loud) echo "Error: the kernel refused the write" ;;
  broken) echo "cannot" >&2; exit 7 ;;
esac
SH
chmod 755 "$dir/record.sh"
r="$dir/record.sh"
cat > "$dir/overrides.toml" <<TOML
[set_power_limit]
commands = ["$r limit {power_limit_w} W gpu {gpu_id}"]
error_pattern = "(?i)error|fail"

[set_persistence_mode]
commands = ["$r persistence {enabled} gpu {gpu_id}"]

[set_gpu_locked_clocks]
commands = ["$r sm min 900 gpu {gpu_id}", "$r sm max {max_clock_mhz} gpu {gpu_id}",
            "$r sm min {min_clock_mhz} gpu {gpu_id}"]

[reset_gpu_locked_clocks]
commands = ["$r sm reset gpu {gpu_id}"]

[set_mem_locked_clocks]
commands = ["$r broken {min_clock_mhz}"]

[reset_locked_clocks]
commands = ["$r slow"]
timeout_s = 1
TOML
chmod 644 "$dir/overrides.toml"
calls() { cat "$dir/calls.log" 2>/dev/null || true; }
state() { "$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))["devices"][int(sys.argv[2])]; print(d.get(sys.argv[3]))' "$dir/state.json" "$1" "$2"; }

# 1. A world-writable file is refused at start, with the fix named.
chmod 666 "$dir/overrides.toml"
if "$zeusd" --socket "$sock" --socket-mode 0666 --allow 'gpu-control=*' --allow 'gpu-read=*' \
     --gpu-command-overrides "$dir/overrides.toml" 2> "$dir/refused.log"; then
  fail "zeusd started with a world-writable override file"
fi
grep -q "world-writable.*chmod o-w" "$dir/refused.log" || fail "refusal: $(cat "$dir/refused.log")"
chmod 644 "$dir/overrides.toml"

start_zeusd --socket "$sock" --socket-mode 0666 --allow 'gpu-control=*' --allow 'gpu-read=*' \
  --log-level info --gpu-command-overrides "$dir/overrides.toml"
grep -q "GPU command overrides from .*: set_persistence_mode set_power_limit set_gpu_locked_clocks reset_gpu_locked_clocks set_mem_locked_clocks reset_locked_clocks" \
  "$dir/zeusd.log" || fail "the configured operations are not logged"

# 2. Upstream's routes: curl's change is made by the commands, and restored through them when
#    curl (the lease holder) exits.
out=$(api POST "/gpu/set_power_limit?gpu_ids=1&power_limit_mw=300000&block=true")
[ "$out" = " 200" ] || fail "set_power_limit: $out"
for _ in $(seq 100); do [ "$(calls | wc -l)" -ge 2 ] && break; sleep 0.02; done
[ "$(calls)" = "limit 300 W gpu 1
limit 700 W gpu 1" ] || fail "set and restore through the command: $(calls)"
[ "$(state 1 limit_mw)" = 700000 ] || fail "the driver was called: $(state 1 limit_mw)"
: > "$dir/calls.log"

out=$(api POST "/gpu/set_persistence_mode?gpu_ids=0&enabled=true&block=true")
[ "$out" = " 200" ] || fail "set_persistence_mode: $out"
out=$(api POST "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=1500&max_clock_mhz=1500&block=true")
[ "$out" = " 200" ] || fail "set_gpu_locked_clocks: $out"
for _ in $(seq 100); do grep -q "sm reset" "$dir/calls.log" && break; sleep 0.02; done
calls | grep -q "^persistence 1 gpu 0$" || fail "persistence: $(calls)"
[ "$(calls | grep '^sm')" = "sm min 900 gpu 0
sm max 1500 gpu 0
sm min 1500 gpu 0
sm reset gpu 0" ] || fail "clock sequence and its restore: $(calls)"
[ "$(state 0 locked_sm_clocks_mhz)" = None ] || fail "the driver locked clocks"

# 3. Failures: a non-zero exit, a matching error_pattern, a timeout; named, and nothing half-kept.
out=$(api POST "/gpu/set_mem_locked_clocks?gpu_ids=0&min_clock_mhz=2619&max_clock_mhz=2619&block=true")
[ "${out##* }" = 500 ] || fail "a failing command: $out"
echo "$out" | grep -q "exited with code 7" || fail "the failure is not named: $out"
echo "$out" | grep -q "cannot" || fail "its stderr is not shown: $out"
cat > "$dir/loud.toml" <<TOML
[set_power_limit]
commands = ["$r loud {power_limit_w}"]
error_pattern = "(?i)error|fail"
TOML
chmod 644 "$dir/loud.toml"
stop_zeusd
start_zeusd --socket "$sock" --socket-mode 0666 --allow 'gpu-control=*' --allow 'gpu-read=*' \
  --gpu-command-overrides "$dir/loud.toml"
out=$(api POST "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000&block=true")
[ "${out##* }" = 500 ] || fail "an error_pattern match: $out"
echo "$out" | grep -q "matched error_pattern" || fail "the match is not named: $out"
out=$(api GET /leases)
echo "$out" | grep -q '"gpu": 0' && fail "a lease was kept for a failed change: $out"
stop_zeusd

start_zeusd --socket "$sock" --socket-mode 0666 --allow 'gpu-control=*' --allow 'gpu-read=*' \
  --gpu-command-overrides "$dir/overrides.toml"
start=$(date +%s%N)
out=$(api POST "/gpu/reset_locked_clocks?gpu_ids=0&block=true")
took=$(( ($(date +%s%N) - start) / 1000000 ))
[ "${out##* }" = 500 ] || fail "a timed-out command: $out"
echo "$out" | grep -q "timed out" || fail "the timeout is not named: $out"
[ "$took" -lt 6000 ] || fail "the timeout took $took ms"

# 4. A client holding its connection, SIGKILLed: restored through the command.
: > "$dir/calls.log"
"$py" - "$sock" <<'PY' > "$dir/holder.out" &
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b"POST /gpu/set_power_limit?gpu_ids=0&power_limit_mw=250000&block=true HTTP/1.1\r\n"
          b"Host: zeusd\r\nContent-Length: 0\r\n\r\n")
print(s.recv(4096).decode().split("\r\n")[0], flush=True)
time.sleep(60)
PY
holder=$!; disown "$holder"
for _ in $(seq 250); do grep -q "limit 250 W gpu 0" "$dir/calls.log" 2>/dev/null && break; sleep 0.02; done
grep -q "limit 250 W gpu 0" "$dir/calls.log" || fail "the holder's change: $(cat "$dir/holder.out") $(calls)"
kill -KILL "$holder"
for _ in $(seq 100); do grep -q "limit 700 W gpu 0" "$dir/calls.log" && break; sleep 0.02; done
grep -q "limit 700 W gpu 0" "$dir/calls.log" || fail "not restored through the command after SIGKILL: $(calls)"
stop_zeusd
echo ok
