// Creating zeusd's listening Unix socket safely.
//
// zeusd runs as root and applies an owner, group and mode to its socket. Doing that by path after
// bind() (chown/chmod follow symlinks) let anyone who can write the socket's directory swap the
// fresh socket for a symlink and have root change the owner and mode of any file. So:
//   - the socket's directory and every directory on its path must be writable by their owner
//     only, and owned by root or by zeusd's user (trusted_path.h: a sticky ancestor such as /tmp
//     is accepted when the entry inside it is trusted); otherwise the socket is refused (or, with
//     allow_unsafe_directory, created with a warning) — whoever can write a directory on the
//     path can put their own socket in zeusd's place, or squat the path first;
//   - the socket is created with its final mode (umask during bind), and its owner and group are
//     set with lchown, which never follows a link;
//   - at stop, the socket file is removed only if it is still the one zeusd bound (same device
//     and inode): a file someone put in its place stays.
// A stale socket file nobody answers on is replaced; a live one is an error.
// Thread-safety: changes the process umask briefly; call from one thread at start-up.
// Failure: PermissionDenied (unsafe directory, chown), InvalidArgument (path), Unavailable.
//
//   auto bound = zeus::zeusd::bind_unix_socket({.path = "/run/zeusd/zeusd.sock", .mode = 0660});
//   ... serve bound->fd ...
//   zeus::zeusd::remove_unix_socket("/run/zeusd/zeusd.sock", *bound);
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "zeus/common/result.h"

namespace zeus::zeusd {

struct UnixSocketOptions {
  std::string path;
  std::optional<uid_t> owner_uid;  // unset: zeusd's user
  std::optional<gid_t> group_gid;  // unset: zeusd's group
  mode_t mode = 0660;
  bool allow_unsafe_directory = false;  // warn instead of refusing a shared directory
};

// A socket file zeusd bound: its listening descriptor and the file's identity.
struct BoundUnixSocket {
  int fd = -1;
  dev_t device = 0;
  ino_t inode = 0;
};

// The listening socket (SOCK_CLOEXEC), bound at `path` with the options' owner, group and mode.
Result<BoundUnixSocket> bind_unix_socket(const UnixSocketOptions& options);

// Removes the file at `path` only if it is still `socket`'s (same device and inode); true when
// removed. Does not close the descriptor.
bool remove_unix_socket(const std::string& path, const BoundUnixSocket& socket);

// The directory holding `path` ("." for a bare name, "/" for one at the root).
std::string directory_of(const std::string& path);

// Creates `directory` (0755) when missing and checks that it and every directory on its path are
// safe for what a root daemon keeps there (trusted_path.h, trusting root and this process's
// user): PermissionDenied naming `what` it holds ("the socket's directory"), the entry at fault,
// `risk` (what anyone who can write it could do) and the fix; or only a warning with
// `allow_unsafe`.
Result<void> ensure_root_only_directory(const std::string& directory, const std::string& what,
                                        const std::string& risk, bool allow_unsafe);

}  // namespace zeus::zeusd
