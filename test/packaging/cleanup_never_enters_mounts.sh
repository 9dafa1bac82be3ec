#!/usr/bin/env bash
# The cleanup of the scripts that mount into a folder they remove (scripts/lib/private_mounts.sh,
# used by rootfs_install.sh and scripts/fresh_make_run.sh) never descends into a mount: with a
# scratch folder bind-mounted, or a tmpfs mounted, inside the folder to remove, remove_tree removes
# nothing, names the mount and fails, and the sentinel file in the mounted folder survives; once
# unmounted, the folder goes. And private_mounts: mounts made by a script in its namespace are not
# seen by the host, even when the script is killed with SIGKILL before any cleanup. Needs root.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "cleanup_never_enters_mounts: needs root (mount)" >&2; exit 1; }
lib="$(cd "$(dirname "$0")/../.." && pwd)/scripts/lib/private_mounts.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
scratch=$(mktemp -d)
mkdir "$scratch/outside"
echo keep > "$scratch/outside/sentinel"

# 1-3 in a private mount namespace of their own (unshare), so that none of their mounts can
# outlive this test whatever happens to it; $scratch itself is removed from the host's.
unshare --mount --propagation private -- bash -euo pipefail -s "$lib" "$scratch" <<'SH' || { rm -rf --one-file-system "$scratch"; fail "the guard (above)"; }
source "$1"
scratch=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
victim="$scratch/victim with space"
mkdir -p "$victim/root/dev" "$victim/tmp"
echo gone > "$victim/file"

# 1. A bind mount of a folder on the same file system (rm --one-file-system alone would enter it).
mount --bind "$scratch/outside" "$victim/root/dev"
[ -f "$victim/root/dev/sentinel" ] || fail "the bind mount is not in place"
[ "$(mounts_below "$victim")" = "$victim/root/dev" ] || fail "mounts_below: '$(mounts_below "$victim")'"
if remove_tree "$victim" 2> "$scratch/err"; then fail "remove_tree removed a folder with a mount below it"; fi
grep -q "NOT removing $victim: mounted below it.*$victim/root/dev" "$scratch/err" || fail "remove_tree said: $(cat "$scratch/err")"
[ -f "$scratch/outside/sentinel" ] && [ -f "$victim/file" ] || fail "remove_tree removed files while refusing"
echo "bind mount: refused ($(cat "$scratch/err")); sentinel kept"

# 2. A tmpfs too (another file system), holding its own sentinel.
mount -t tmpfs scratch-tmpfs "$victim/tmp"
echo keep > "$victim/tmp/sentinel"
if remove_tree "$victim" 2> "$scratch/err"; then fail "remove_tree removed a folder with a tmpfs below it"; fi
[ -f "$victim/tmp/sentinel" ] && [ -f "$scratch/outside/sentinel" ] || fail "a sentinel was removed"
echo "tmpfs and bind mount: refused; sentinels kept"

# 3. Unmounted, the folder goes (and only it).
umount "$victim/tmp" "$victim/root/dev"
remove_tree "$victim" || fail "remove_tree refused a folder with nothing mounted below it"
[ ! -e "$victim" ] && [ -f "$scratch/outside/sentinel" ] || fail "after unmounting: $(ls -A "$scratch")"
echo "unmounted: removed; the bound folder's sentinel kept"
SH

# 4. private_mounts: a script that binds a folder and dies by SIGKILL leaves no mount on the host.
cat > "$scratch/binder.sh" <<'SH'
set -euo pipefail
source "$1"
private_mounts "$0" "$@"
mkdir -p "$2/inside"
mount --bind "$2/outside" "$2/inside"
[ -f "$2/inside/sentinel" ] && mounts_below "$2" > "$2/seen-inside"
kill -KILL $$
SH
if bash "$scratch/binder.sh" "$lib" "$scratch" 2> /dev/null; then fail "the binder was not killed"; fi
[ "$(cat "$scratch/seen-inside" 2>/dev/null)" = "$scratch/inside" ] || fail "the binder's mount was not in place in its namespace"
seen=$(source "$lib" && mounts_below "$scratch")
[ -z "$seen" ] || { umount -l "$scratch/inside" 2>/dev/null || true; fail "the killed script's mount is on the host: $seen"; }
echo "private_mounts: the SIGKILLed script's bind mount never reached the host"

source "$lib"
remove_tree "$scratch/inside" || fail "remove_tree"
[ -f "$scratch/outside/sentinel" ] || fail "the sentinel"
remove_tree "$scratch" || fail "removing the scratch folder"
echo "cleanup never enters mounts: ok"
