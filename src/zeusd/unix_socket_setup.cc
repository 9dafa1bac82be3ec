#include "zeusd/unix_socket_setup.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "zeus/common/log.h"
#include "zeusd/trusted_path.h"

namespace zeus::zeusd {
namespace {

std::string errno_text() { return std::strerror(errno); }

}  // namespace

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

Result<void> ensure_root_only_directory(const std::string& directory, const std::string& what,
                                        const std::string& risk, bool allow_unsafe) {
  struct stat info {};
  if (stat(directory.c_str(), &info) != 0 && mkdir(directory.c_str(), 0755) != 0) {
    return fail(ErrorCode::kPermissionDenied,
                "cannot create " + what + " " + directory + ": " + errno_text());
  }
  if (const auto bad = find_untrusted_path_entry(directory, geteuid())) {
    const std::string message =
        what + " " + directory + " is unsafe: " + (bad->path == directory ? "it" : bad->path) +
        " " + bad->why + " (every directory on its path must be root's, writable by root only); " +
        risk + " — fix: " + bad->fix +
        "; or use a directory only root can write, such as /run/zeusd";
    if (!allow_unsafe) {
      return fail(ErrorCode::kPermissionDenied,
                  message + " (or --allow-unsafe-socket-dir to start anyway)");
    }
    log_warning(message + " (starting anyway: --allow-unsafe-socket-dir)");
  }
  return ok();
}

bool remove_unix_socket(const std::string& path, const BoundUnixSocket& socket) {
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0 || !S_ISSOCK(info.st_mode) || info.st_dev != socket.device ||
      info.st_ino != socket.inode) {
    return false;
  }
  return unlink(path.c_str()) == 0;
}

Result<BoundUnixSocket> bind_unix_socket(const UnixSocketOptions& options) {
  const std::string& path = options.path;
  sockaddr_un address{};
  if (path.empty() || path.size() >= sizeof(address.sun_path)) {
    return fail(ErrorCode::kInvalidArgument, "socket path '" + path + "' must be 1 to " +
                                                 std::to_string(sizeof(address.sun_path) - 1) +
                                                 " bytes");
  }
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  // The directory (e.g. /run/zeusd) is created root-only when missing, and its path must be safe.
  auto safe = ensure_root_only_directory(
      directory_of(path), "the socket's directory",
      "anyone who can write it can replace the socket (or squat its path)",
      options.allow_unsafe_directory);
  if (!safe) return fail(safe.error());
  struct stat info {};
  // A socket file nobody answers on is stale (zeusd was killed): replace it.
  if (lstat(path.c_str(), &info) == 0) {
    if (!S_ISSOCK(info.st_mode)) {
      return fail(ErrorCode::kInvalidArgument,
                  path + " exists and is not a socket; choose another --socket");
    }
    const int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe < 0) return fail(ErrorCode::kUnavailable, "socket(AF_UNIX): " + errno_text());
    const bool live = connect(probe, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    close(probe);
    if (live)
      return fail(ErrorCode::kUnavailable,
                  "another zeusd is already serving " + path + "; stop it first");
    unlink(path.c_str());
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(ErrorCode::kUnavailable, "socket(AF_UNIX): " + errno_text());
  // bind() creates the file with 0777 & ~umask: its final mode, with no chmod by path after.
  const mode_t previous_umask = umask(static_cast<mode_t>(~options.mode & 0777));
  const int bind_result = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  const int bind_errno = errno;
  umask(previous_umask);
  if (bind_result != 0) {
    close(fd);
    errno = bind_errno;
    return fail(bind_errno == EACCES ? ErrorCode::kPermissionDenied : ErrorCode::kUnavailable,
                "cannot bind " + path + ": " + errno_text());
  }
  // The file bind() made: only it is ever removed (at stop, or below on failure).
  BoundUnixSocket bound{fd, 0, 0};
  if (lstat(path.c_str(), &info) != 0 || !S_ISSOCK(info.st_mode)) {
    close(fd);
    return fail(
        ErrorCode::kUnavailable,
        path + " was replaced as zeusd created it; does another program use its directory?");
  }
  bound.device = info.st_dev;
  bound.inode = info.st_ino;
  if (options.owner_uid || options.group_gid) {
    const uid_t owner = options.owner_uid ? *options.owner_uid : static_cast<uid_t>(-1);
    const gid_t group = options.group_gid ? *options.group_gid : static_cast<gid_t>(-1);
    // lchown: if the path was swapped for a symlink, only the link changes, never its target.
    if (lchown(path.c_str(), owner, group) != 0) {
      const std::string why = errno_text();
      close(fd);
      remove_unix_socket(path, bound);
      return fail(ErrorCode::kPermissionDenied,
                  "cannot chown " + path + ": " + why + " (run zeusd as root)");
    }
  }
  if (listen(fd, 64) != 0) {
    const std::string why = errno_text();
    close(fd);
    remove_unix_socket(path, bound);
    return fail(ErrorCode::kUnavailable, "cannot listen on " + path + ": " + why);
  }
  return bound;
}

}  // namespace zeus::zeusd
