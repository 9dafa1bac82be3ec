#!/usr/bin/env bash
# Measures `make run` as a new user meets it: a clean clone of this repository's HEAD inside the
# bare Debian 12 root file system of test/packaging/rootfs_install.sh (build/rootfs-bookworm.tar,
# made there with mmdebstrap; nothing of the project's packages installed), with only `make`
# added (Debian's "standard" install has it; minbase has not), ccache disabled, as root in a
# chroot. Prints make run's own table of phases and the whole time. Needs root and the mirror.
#   scripts/fresh_make_run.sh [KEEP_DIR]     (KEEP_DIR: where to leave the root file system)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
# In a private mount namespace: the chroot's mounts vanish with it, and the folder is removed
# only when nothing is mounted below it (scripts/lib/private_mounts.sh).
source "$src/scripts/lib/private_mounts.sh"
private_mounts "$0" "$@"
cache="$src/build/rootfs-bookworm.tar"
[ -s "$cache" ] || { echo "fresh_make_run.sh: no $cache (run test/packaging/rootfs_install.sh once)" >&2; exit 1; }
keep=${1:-}
dir=${keep:-$(mktemp -d)}
root="$dir/root"
cleanup() {
  for m in proc dev/pts dev; do mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m"; done
  [ -n "$keep" ] || remove_tree "$dir" || { echo "fresh_make_run.sh: left $dir in place" >&2; exit 1; }
}
trap cleanup EXIT
mkdir -p "$root"
tar -C "$root" -xf "$cache"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
cp /etc/resolv.conf "$root/etc/resolv.conf"
git clone -q "$src" "$root/root/zeus"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 CCACHE_DISABLE=1 "$@"; }
in_root /bin/sh -c 'apt-get update -qq && apt-get install -y -qq make > /dev/null'
start=$(date +%s)
in_root /bin/sh -c 'cd /root/zeus && make run' 2>&1 | tee "$dir/make-run.log"
echo "Debian packages make run added: $(in_root sh -c "grep -c '^Setting up' /root/zeus/build/logs/apt.log")"
echo "fresh make run: $(( $(date +%s) - start )) s (log: $dir/make-run.log)"
