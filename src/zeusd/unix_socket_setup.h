// Creating zeusd's listening Unix socket safely (probe item A1).
//
// zeusd runs as root and applies an owner, group and mode to its socket. Doing that by path after
// bind() (chown/chmod follow symlinks) let anyone who can write the socket's directory swap the
// fresh socket for a symlink and have root change the owner and mode of any file. So:
//   - the socket's directory must be writable by its owner only, and owned by root or by zeusd's
//     user; otherwise the socket is refused (or, with allow_unsafe_directory, created with a
//     warning) — a shared directory also lets another user squat the path first;
//   - the socket is created with its final mode (umask during bind), and its owner and group are
//     set with lchown, which never follows a link.
// A stale socket file nobody answers on is replaced; a live one is an error.
// Thread-safety: changes the process umask briefly; call from one thread at start-up.
// Failure: PermissionDenied (unsafe directory, chown), InvalidArgument (path), Unavailable.
//
//   auto fd = zeus::zeusd::bind_unix_socket({.path = "/run/zeusd/zeusd.sock", .mode = 0660});
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "zeus/result.h"

namespace zeus::zeusd {

struct UnixSocketOptions {
  std::string path;
  std::optional<uid_t> owner_uid;  // unset: zeusd's user
  std::optional<gid_t> group_gid;  // unset: zeusd's group
  mode_t mode = 0660;
  bool allow_unsafe_directory = false;  // warn instead of refusing a shared directory
};

// The listening socket (SOCK_CLOEXEC), bound at `path` with the options' owner, group and mode.
Result<int> bind_unix_socket(const UnixSocketOptions& options);

// The directory holding `path` ("." for a bare name, "/" for one at the root).
std::string directory_of(const std::string& path);

// Creates `directory` (0755) when missing and checks it is safe for what a root daemon keeps
// there (unsafe_socket_directory_reason): PermissionDenied naming it, `what` it holds ("the
// socket's directory") and `risk` (what anyone who can write it could do), or only a warning
// with `allow_unsafe`.
Result<void> ensure_root_only_directory(const std::string& directory, const std::string& what,
                                        const std::string& risk, bool allow_unsafe);

// Why `directory` is unsafe for a root daemon's socket ("" when it is safe): writable by group
// or others, or owned by someone other than root or this process's user.
std::string unsafe_socket_directory_reason(const std::string& directory);

}  // namespace zeus::zeusd
