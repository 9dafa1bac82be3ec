#!/usr/bin/env bash
# zeusd checks every directory on the way to its socket and its lease journal, and
# at stop removes only the socket file it bound. The real daemon over the fake libnvidia-ml.so.1:
#   1. an ancestor of the socket owned by another user (as root; otherwise one its group can
#      write) is refused at start, naming that ancestor and the fix;
#   2. the same for an ancestor of --lease-journal that its group can write;
#   3. with --allow-unsafe-socket-dir zeusd starts with the warning; the owner of the ancestor
#      then moves the socket's directory away and binds its own socket at the path: zeusd's stop
#      leaves that socket in place (and says so);
#   4. a fresh directory under /tmp (sticky, but the directory is root's) is accepted silently.
set -euo pipefail
source "${ZEUS_SOURCE_DIR:?}/test/e2e/lib/zeusd_lib.sh"
fake_gpus '{"devices": [{"name": "NVIDIA H100 80GB HBM3", "architecture": 9}]}'

# bobdir is another user's (or its group's); sub, inside it, is root's and 0755 as zeusd wants.
mkdir -p "$dir/bobdir/sub" "$dir/safe"
chmod 755 "$dir/bobdir/sub" "$dir/safe"
if [ "$(id -u)" = 0 ]; then
  chown 65534 "$dir/bobdir"
  chmod 755 "$dir/bobdir"
  why="$dir/bobdir is owned by uid 65534, not root"
  fix="chown root $dir/bobdir"
else
  chmod 775 "$dir/bobdir"
  why="$dir/bobdir is writable by its group (mode 0775)"
  fix="chmod go-w $dir/bobdir"
fi
bob_sock="$dir/bobdir/sub/zeusd.sock"

# 1. Refused, naming the ancestor and the fix (a zeusd that starts anyway is stopped after 10 s).
if timeout 10 "$zeusd" --socket "$bob_sock" --allow 'gpu-read=*' > /dev/null 2> "$dir/zeusd.log"; then
  fail "zeusd started under an unsafe ancestor"
fi
grep -q "is unsafe: $why" "$dir/zeusd.log" || fail "the ancestor is not named"
grep -q "fix: $fix" "$dir/zeusd.log" || fail "no fix given"
[ ! -e "$bob_sock" ] || fail "the socket was created anyway"

# 2. The lease journal's path goes through the same check.
mkdir -p "$dir/shared/zeusd"
chmod 775 "$dir/shared"
chmod 755 "$dir/shared/zeusd"
if timeout 10 "$zeusd" --socket "$sock" --lease-journal "$dir/shared/zeusd/leases.json" \
    --allow 'gpu-read=*' > /dev/null 2> "$dir/zeusd.log"; then
  fail "zeusd started with a journal under a group-writable ancestor"
fi
grep -q "the lease journal's directory $dir/shared/zeusd is unsafe: $dir/shared is writable by its group (mode 0775)" \
  "$dir/zeusd.log" || fail "the journal's ancestor is not named"

# 3. Allowed with a warning; an impostor's socket at the path survives zeusd's stop.
start_zeusd --socket "$bob_sock" --socket-mode 0666 --allow 'gpu-read=*' --allow-unsafe-socket-dir
grep -q "is unsafe: $why.*starting anyway" "$dir/zeusd.log" || fail "no warning"
mv "$dir/bobdir/sub" "$dir/bobdir/sub.old"
mkdir "$dir/bobdir/sub"
"$py" -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$bob_sock"
stop_zeusd
[ -S "$bob_sock" ] || fail "zeusd removed the impostor's socket at stop"
grep -q "left $bob_sock in place: it is no longer the socket zeusd created" "$dir/zeusd.log" \
  || fail "the kept socket is not reported"

# 4. A root-owned 0755 directory under /tmp (sticky 1777): accepted, no warning; the socket is
#    removed at stop.
start_zeusd --socket "$sock" --allow 'gpu-read=*'
! grep -q "unsafe" "$dir/zeusd.log" || fail "a warning for a safe directory"
stop_zeusd
[ ! -e "$sock" ] || fail "zeusd left its own socket behind"
echo "zeusd_refuses_unsafe_socket_ancestors: ok"
