#!/usr/bin/env bash
# `zeusd --config` refuses typos, sections, syntax errors and garbage with the
# line, before touching anything; a good file works and the command line overrides it.
set -euo pipefail
zeusd="${ZEUS_BIN:?}/zeusd"
dir=$(mktemp -d)
chmod 700 "$dir"
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
export ZEUS_NVML_PATH="${ZEUS_FAKES:?}/libnvidia-ml.so.1"
echo '{"devices": [{"name": "NVIDIA H100 80GB HBM3", "architecture": 9}]}' > "$dir/state.json"
export ZEUS_FAKE_NVML_STATE="$dir/state.json" ZEUS_POWERCAP_ROOT="$dir/no-powercap"

refused() {  # refused <expected text> <file content>
  printf '%b' "$2" > "$dir/bad.toml"
  if "$zeusd" --config "$dir/bad.toml" > "$dir/out.txt" 2>&1; then fail "accepted: $2"; fi
  grep -q -- "$1" "$dir/out.txt" || fail "no '$1' in: $(cat "$dir/out.txt")"
  [ ! -e "$dir/c.sock" ] || fail "a socket was created from a refused config"
}
refused "line 2: unknown key 'alow'" "socket = \"$dir/c.sock\"\nalow = [\"gpu-control=@root\"]\n"
refused "line 2" "socket = \"$dir/c.sock\"\nallow = [\"gpu-control=@root\"\n"
refused "sections are not used" "[zeusd]\nsocket = \"$dir/c.sock\"\n"
head -c 4096 /dev/urandom > "$dir/garbage.bin"
if "$zeusd" --config "$dir/garbage.bin" > "$dir/out.txt" 2>&1; then fail "accepted random bytes"; fi
grep -q "garbage.bin line" "$dir/out.txt" || fail "garbage: $(cat "$dir/out.txt")"
if "$zeusd" --config "$dir/none.toml" > "$dir/out.txt" 2>&1; then fail "accepted a missing file"; fi
grep -q "cannot read --config" "$dir/out.txt" || fail "missing file: $(cat "$dir/out.txt")"

# A good file; --socket on the command line wins over the file's.
printf 'socket = "%s/a.sock"\nallow = ["gpu-read=*"]\n' "$dir" > "$dir/good.toml"
"$zeusd" --config "$dir/good.toml" --socket "$dir/b.sock" > "$dir/log.txt" 2>&1 &
pid=$!
for _ in $(seq 50); do [ -S "$dir/b.sock" ] && break; sleep 0.1; done
[ -S "$dir/b.sock" ] || fail "zeusd did not serve on the command line's socket: $(cat "$dir/log.txt")"
[ ! -e "$dir/a.sock" ] || fail "the file's socket was used although --socket overrides it"
grep -q "gpu-read allowed for root, \*" "$dir/log.txt" || fail "the file's allow was lost: $(cat "$dir/log.txt")"
echo "zeusd_config: ok"
