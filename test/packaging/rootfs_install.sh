#!/usr/bin/env bash
# The wheel and the Debian package on a bare Debian 12: a minimal root file system (mmdebstrap
# --variant=minbase, from this machine's Debian mirrors, with python3-venv and nothing of the
# project's build: no -dev package, no compiler), cached as build/rootfs-bookworm.tar and
# unpacked afresh for each run. In a chroot there:
#   1. the cp311 wheel into a new venv with pip install --no-index; zeus devices, zeus measure --
#      sleep 1 and a ZeusMonitor window on the fake NVML (copied in: no GPU here);
#   2. apt-get install ./zeus_*.deb (its Depends: from the mirror); zeus devices, zeusd serve on a
#      socket in a temporary folder answering /discover; the units (zeusd, zeus-exporter, naming
#      /usr/bin), the man pages, the group; gnuplot-nox suggested, not recommended;
#   3. with a zeusd running: the package installed again (an upgrade) leaves it running and says
#      so (no systemd here); dpkg -r zeus stops it with SIGTERM (prerm), leaves none of the
#      package's files, and keeps the operator's own file.
# Needs root (chroot, mount) and the Debian mirror (as make deps does). The whole script runs in a
# private mount namespace (scripts/lib/private_mounts.sh): the chroot's /proc and the host's /dev
# bound there vanish with it, whatever ends the script, and its folder is removed only when
# nothing is mounted below it (rm -rf through a bound /dev would delete the host's device nodes).
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "rootfs_install: needs root (chroot)" >&2; exit 1; }
source "$(dirname "$0")/../../scripts/lib/private_mounts.sh"
private_mounts "$0" "$@"
src=${ZEUS_SOURCE_DIR:?}
dist=${ZEUS_DIST_DIR:?}
fail() { echo "FAIL: $*" >&2; exit 1; }
wheel=$(ls "$dist"/zeus_cpp-*-cp311-cp311-*.whl 2>/dev/null | head -1)
deb=$(ls "$dist"/zeus_*_amd64.deb 2>/dev/null | head -1)
[ -n "$wheel" ] || fail "no cp311 wheel in $dist: run make wheel"
[ -n "$deb" ] || fail "no zeus_*_amd64.deb in $dist: run make deb"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
grep -q -- '-dev\b' <<< "$depends" && fail "the package depends on a -dev package: $depends"
suggests=$(dpkg-deb -f "$deb" Suggests) recommends=$(dpkg-deb -f "$deb" Recommends)
echo "Suggests: $suggests; Recommends: ${recommends:-(none)}"
grep -q 'gnuplot-nox' <<< "$suggests" || fail "gnuplot-nox is not suggested: '$suggests'"
if grep -q 'gnuplot' <<< "$recommends"; then fail "gnuplot is recommended: $recommends"; fi
scripts=$(dpkg-deb -I "$deb" | grep -oE '\b(prerm|postinst|postrm)\b' | sort -u | tr '\n' ' ')
[ "$scripts" = "postinst postrm prerm " ] || fail "maintainer scripts: $scripts"

cache="$src/build/rootfs-bookworm.tar"
if [ ! -s "$cache" ]; then
  command -v mmdebstrap > /dev/null || fail "mmdebstrap is not installed (make deps)"
  mirrors=()
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -s "$f" ] && grep -q '^[^#]*deb' "$f" && grep -qi 'debian' "$f" && mirrors+=("$f")
  done
  echo "building the bare Debian 12 root file system (once; cached as $cache) from ${mirrors[*]}"
  start=$(date +%s)
  mmdebstrap --quiet --format=tar --variant=minbase --include=python3-venv bookworm "$cache.tmp" "${mirrors[@]}" \
    > "$cache.log" 2>&1 || { tail -20 "$cache.log"; rm -f "$cache.tmp"; fail "mmdebstrap failed"; }
  mv "$cache.tmp" "$cache"
  echo "root file system: $(( $(date +%s) - start )) s, $(du -m "$cache" | cut -f1) MiB"
fi

dir=$(mktemp -d)
root="$dir/root"
zeusd_pid=""
cleanup() {
  [ -z "$zeusd_pid" ] || kill -TERM "$zeusd_pid" 2>/dev/null || true
  for m in proc dev/pts dev sys; do mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m"; done
  remove_tree "$dir" || { echo "rootfs_install: left $dir in place" >&2; exit 1; }
}
trap cleanup EXIT
mkdir "$root"
tar -C "$root" -xf "$cache"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mkdir -p "$root/opt/zeus-test"
cp "$wheel" "$deb" "${ZEUS_FAKES:?}/libnvidia-ml.so.1" "$root/opt/zeus-test/"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

dev=$(in_root dpkg-query -W -f='${Package}\n' | grep -E -- '-dev$|^(gcc|g\+\+|cmake|make)$' || true)
[ -z "$dev" ] || fail "the bare system has build packages: $dev"

echo "--- 1. the wheel in a venv"
in_root /bin/bash -euo pipefail -c '
cd /opt/zeus-test
python3 -m venv /opt/venv
/opt/venv/bin/pip install --no-index --disable-pip-version-check -q ./zeus_cpp-*.whl
echo "{\"devices\": [{\"power_draw_mw\": 300000}]}" > state.json
export ZEUS_NVML_PATH=/opt/zeus-test/libnvidia-ml.so.1 ZEUS_FAKE_NVML_STATE=/opt/zeus-test/state.json
/opt/venv/bin/zeus devices
/opt/venv/bin/zeus measure --json -- sleep 1 > measure.json
/opt/venv/bin/python -c "
import json
m = json.load(open(\"measure.json\"))
assert m[\"time_s\"] >= 1 and 250 < m[\"gpu_energy_j\"][\"0\"] < 350, m
print(\"zeus measure -- sleep 1:\", m[\"gpu_energy_j\"], \"J in\", m[\"time_s\"], \"s\")"
/opt/venv/bin/python -c "
import time
from zeus_cpp.monitor import ZeusMonitor
m = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
m.begin_window(\"w\"); time.sleep(0.3); r = m.end_window(\"w\")
assert abs(r.gpu_energy[0] / r.time - 300) < 15, r
print(\"ZeusMonitor window: %.1f J in %.3f s\" % (r.gpu_energy[0], r.time))"
' || fail "the wheel on the bare system"

echo "--- 2. the Debian package"
in_root /bin/bash -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q /opt/zeus-test/zeus_*_amd64.deb' \
  > "$dir/apt.log" 2>&1 || { tail -20 "$dir/apt.log"; fail "apt-get install ./zeus.deb"; }
grep -E "zeusd is installed but not started" "$dir/apt.log" > /dev/null || fail "postinst said nothing: $(tail -5 "$dir/apt.log")"
in_root dpkg -L zeus > "$dir/files.txt"
in_root /bin/bash -euo pipefail -c '
export ZEUS_NVML_PATH=/opt/zeus-test/libnvidia-ml.so.1 ZEUS_FAKE_NVML_STATE=/opt/zeus-test/state.json
[ "$(command -v zeus)" = /usr/bin/zeus ] && [ "$(command -v zeusd)" = /usr/bin/zeusd ]
zeus devices | grep -q "GPU 0"
grep -q "^ExecStart=/usr/bin/zeusd serve" /lib/systemd/system/zeusd.service
grep -q "^ExecStart=/usr/bin/zeus exporter" /lib/systemd/system/zeus-exporter.service
if grep -n "^ExecStart=/usr/local" /lib/systemd/system/zeusd.service /lib/systemd/system/zeus-exporter.service; then exit 1; fi
getent group zeus > /dev/null
zcat /usr/share/man/man1/zeus.1.gz | grep -q "^\.TH ZEUS"
zcat /usr/share/man/man1/zeusd.1.gz | grep -q "^\.TH ZEUSD"
ls /usr/share/zeus/data/summary_train.csv > /dev/null
sock=$(mktemp -d)/zeusd.sock
zeusd serve --socket-path "$sock" --allow "gpu-read=*" 2> /tmp/zeusd.log &
pid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
python3 - "$sock" <<PY
import http.client, json, socket, sys
class Unix(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX); self.sock.connect(sys.argv[1])
c = Unix("zeusd"); c.request("GET", "/discover"); r = c.getresponse()
body = json.loads(r.read())
assert r.status == 200 and body["gpus"], body
print("zeusd serve: /discover answers", len(body["gpus"]), "GPU(s)")
PY
kill -TERM $pid; wait $pid
mkdir -p /etc/zeusd && echo operator > /etc/zeusd/notes.txt
' || fail "the installed package"

echo "--- 3. a running zeusd across an upgrade and dpkg -r"
# Started in the chroot and left running (a daemon started by hand: no systemd here).
zeusd_pid=$(in_root /bin/bash -euo pipefail -c '
export ZEUS_NVML_PATH=/opt/zeus-test/libnvidia-ml.so.1 ZEUS_FAKE_NVML_STATE=/opt/zeus-test/state.json
sock=$(mktemp -d)/zeusd.sock
/usr/bin/zeusd serve --socket-path "$sock" --allow "gpu-read=*" > /opt/zeus-test/zeusd-running.log 2>&1 < /dev/null &
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] && echo $!') || fail "zeusd did not start: $(cat "$root/opt/zeus-test/zeusd-running.log")"
alive() { [ -e "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
alive "$zeusd_pid" || fail "zeusd (pid $zeusd_pid) is not running"
in_root dpkg -i "/opt/zeus-test/$(basename "$deb")" > "$dir/upgrade.log" 2>&1 || { cat "$dir/upgrade.log"; fail "dpkg -i again (upgrade)"; }
alive "$zeusd_pid" || fail "the upgrade stopped zeusd: $(cat "$dir/upgrade.log")"
grep -q "a zeusd started before this upgrade still runs the old program" "$dir/upgrade.log" \
  || fail "postinst said nothing of the running zeusd: $(cat "$dir/upgrade.log")"
echo "upgrade: zeusd (pid $zeusd_pid) still runs, and postinst says so"
in_root dpkg -r zeus > "$dir/remove.log" 2>&1 || { cat "$dir/remove.log"; fail "dpkg -r zeus"; }
for _ in $(seq 20); do alive "$zeusd_pid" || break; sleep 0.1; done
alive "$zeusd_pid" && fail "dpkg -r left zeusd (pid $zeusd_pid) running: $(cat "$dir/remove.log")"
grep -q "stopping on signal 15" "$root/opt/zeus-test/zeusd-running.log" \
  || fail "zeusd did not stop on SIGTERM: $(tail -3 "$root/opt/zeus-test/zeusd-running.log")"
grep -q "Stopping zeusd" "$dir/remove.log" || fail "prerm said nothing: $(cat "$dir/remove.log")"
zeusd_pid=""
echo "dpkg -r: prerm stopped zeusd with SIGTERM ($(grep -o 'stopping on signal 15.*' "$root/opt/zeus-test/zeusd-running.log"))"
left=()
while read -r f; do
  [ -e "$root$f" ] && [ ! -d "$root$f" ] && left+=("$f")
done < "$dir/files.txt"
[ ${#left[@]} = 0 ] || fail "dpkg -r left the package's files: ${left[*]}"
[ -f "$root/etc/zeusd/notes.txt" ] || fail "dpkg -r removed the operator's /etc/zeusd/notes.txt"
echo "rootfs install ok: wheel $(basename "$wheel"), package $(basename "$deb") ($(wc -l < "$dir/files.txt") paths)"
