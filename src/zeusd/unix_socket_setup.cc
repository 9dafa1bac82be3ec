#include "zeusd/unix_socket_setup.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "zeus/log.h"

namespace zeus::zeusd {
namespace {

std::string errno_text() { return std::strerror(errno); }

std::string octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

std::string unsafe_socket_directory_reason(const std::string& directory) {
  struct stat info {};
  if (stat(directory.c_str(), &info) != 0) return "cannot stat it: " + errno_text();
  if (!S_ISDIR(info.st_mode)) return "it is not a directory";
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return "it is writable by " + std::string((info.st_mode & S_IWOTH) ? "everyone" : "its group") +
           " (mode " + octal(info.st_mode) + ")";
  }
  if (info.st_uid != 0 && info.st_uid != geteuid()) {
    return "it is owned by uid " + std::to_string(info.st_uid) + ", not root";
  }
  return "";
}

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
  if (const std::string why = unsafe_socket_directory_reason(directory); !why.empty()) {
    const std::string message = what + " " + directory + " is unsafe: " + why + "; " + risk +
                                " — use a directory only root can write, such as /run/zeusd";
    if (!allow_unsafe) {
      return fail(ErrorCode::kPermissionDenied,
                  message + " (or --allow-unsafe-socket-dir to start anyway)");
    }
    log_warning(message + " (starting anyway: --allow-unsafe-socket-dir)");
  }
  return ok();
}

Result<int> bind_unix_socket(const UnixSocketOptions& options) {
  const std::string& path = options.path;
  sockaddr_un address{};
  if (path.empty() || path.size() >= sizeof(address.sun_path)) {
    return fail(ErrorCode::kInvalidArgument, "socket path '" + path + "' must be 1 to " +
                                                 std::to_string(sizeof(address.sun_path) - 1) +
                                                 " bytes");
  }
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  // The directory (e.g. /run/zeusd) is created root-only when missing, and must be safe.
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
  const int bound = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  const int bind_errno = errno;
  umask(previous_umask);
  if (bound != 0) {
    close(fd);
    errno = bind_errno;
    return fail(bind_errno == EACCES ? ErrorCode::kPermissionDenied : ErrorCode::kUnavailable,
                "cannot bind " + path + ": " + errno_text());
  }
  if (options.owner_uid || options.group_gid) {
    const uid_t owner = options.owner_uid ? *options.owner_uid : static_cast<uid_t>(-1);
    const gid_t group = options.group_gid ? *options.group_gid : static_cast<gid_t>(-1);
    // lchown: if the path was swapped for a symlink, only the link changes, never its target.
    if (lchown(path.c_str(), owner, group) != 0) {
      const std::string why = errno_text();
      close(fd);
      unlink(path.c_str());
      return fail(ErrorCode::kPermissionDenied,
                  "cannot chown " + path + ": " + why + " (run zeusd as root)");
    }
  }
  if (listen(fd, 64) != 0) {
    const std::string why = errno_text();
    close(fd);
    unlink(path.c_str());
    return fail(ErrorCode::kUnavailable, "cannot listen on " + path + ": " + why);
  }
  return fd;
}

}  // namespace zeus::zeusd
