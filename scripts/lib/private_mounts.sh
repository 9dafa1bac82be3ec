# shellcheck shell=bash
# Sourced by every script that mounts something into a folder it later removes (a chroot's /proc
# and the host's /dev: test/packaging/rootfs_install.sh, scripts/fresh_make_run.sh). Removing such
# a folder while a mount is still in place descends into the mount: with /dev bound there, `rm -rf`
# deletes the host's device nodes. Two guards, both needed:
#
#   private_mounts "$0" "$@"   at the top of the script: runs it again (exec) in a mount namespace
#                              of its own with private propagation (unshare), once. Its mounts are
#                              then invisible to the host and vanish with the namespace, whatever
#                              ends the script (an error, a signal, SIGKILL).
#   remove_tree DIR            removes DIR (rm -rf --one-file-system) only when nothing is mounted
#                              at or below it (this namespace's /proc/self/mountinfo); otherwise
#                              it removes nothing, names the mounts on stderr and returns 1.
#
# mounts_below DIR prints the mount points at or below DIR, one per line.

private_mounts() {  # private_mounts SCRIPT ARGS...: returns only inside the private namespace
  local here
  here=$(readlink /proc/self/ns/mnt)
  [ -n "${ZEUS_PRIVATE_MOUNT_NS:-}" ] && [ "$ZEUS_PRIVATE_MOUNT_NS" = "$here" ] && return 0
  command -v unshare > /dev/null || { echo "private_mounts: unshare (util-linux) is missing" >&2; exit 1; }
  exec unshare --mount --propagation private -- /usr/bin/env bash -c \
    'ZEUS_PRIVATE_MOUNT_NS=$(readlink /proc/self/ns/mnt) && export ZEUS_PRIVATE_MOUNT_NS && exec bash "$0" "$@"' "$@"
}

mounts_below() {  # DIR
  local dir
  dir=$(realpath -m "$1")
  # Field 5 of mountinfo is the mount point, with space, tab, newline and backslash as \ooo.
  awk -v dir="$dir" '
    function unescape(s,   out, i, c) {
      out = ""
      for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "\\" && substr(s, i + 1, 3) ~ /^[0-7][0-7][0-7]$/) {
          out = out sprintf("%c", (substr(s, i + 1, 1) * 64) + (substr(s, i + 2, 1) * 8) + substr(s, i + 3, 1))
          i += 3
        } else out = out c
      }
      return out
    }
    { point = unescape($5); if (point == dir || index(point, dir "/") == 1) print point }
  ' /proc/self/mountinfo
}

remove_tree() {  # DIR
  local dir=$1 mounted
  [ -e "$dir" ] || return 0
  mounted=$(mounts_below "$dir")
  if [ -n "$mounted" ]; then
    echo "remove_tree: NOT removing $dir: mounted below it (unmount first): $(tr '\n' ' ' <<< "$mounted")" >&2
    return 1
  fi
  rm -rf --one-file-system -- "$dir"
}
