#include "zeusd/trusted_path.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <vector>

namespace zeus::zeusd {
namespace {

// Symbolic links followed on one path before giving up (the kernel's own limit, ELOOP).
constexpr int kMaxSymlinks = 40;

std::string octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// The names of `path`'s components ("." and empty ones left out; ".." kept).
std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(start, slash - start);
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    start = slash + 1;
  }
  return parts;
}

std::string join(const std::string& directory, const std::string& name) {
  return directory == "/" ? "/" + name : directory + "/" + name;
}

// The entry at `path` with `mode` is writable by more than its owner.
UntrustedPathEntry writable_entry(const std::string& path, mode_t mode, const std::string& fix) {
  return {path,
          "is writable by " + std::string((mode & S_IWOTH) ? "everyone" : "its group") + " (mode " +
              octal(mode) + ")",
          fix};
}

std::string parent_of(const std::string& directory) {
  const size_t slash = directory.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : directory.substr(0, slash);
}

// What one directory on the way is, as far as trust goes.
struct Examined {
  std::optional<UntrustedPathEntry> problem;
  // Writable by others, but sticky: acceptable only if the entry taken inside is trusted.
  bool sticky_open = false;
};

Examined examine_directory(const std::string& path, uid_t trusted_uid) {
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0) {
    return {UntrustedPathEntry{path, std::string("cannot be examined: ") + std::strerror(errno),
                               "create it (owned by root, mode 0755), or choose another path"},
            false};
  }
  if (!S_ISDIR(info.st_mode)) {
    return {UntrustedPathEntry{path, "is not a directory", "choose another path"}, false};
  }
  if (info.st_uid != 0 && info.st_uid != trusted_uid) {
    const std::string owners =
        trusted_uid == 0 ? "root" : "root or uid " + std::to_string(trusted_uid) + " (zeusd's)";
    return {UntrustedPathEntry{path,
                               "is owned by uid " + std::to_string(info.st_uid) + ", not " + owners,
                               "chown root " + path},
            false};
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    if ((info.st_mode & S_ISVTX) != 0) return {std::nullopt, true};
    return {writable_entry(path, info.st_mode, "chmod go-w " + path), false};
  }
  return {};
}

}  // namespace

std::optional<UntrustedPathEntry> find_untrusted_path_entry(const std::string& directory,
                                                            uid_t trusted_uid) {
  std::string absolute = directory;
  if (absolute.empty() || absolute[0] != '/') {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) == nullptr) {
      return UntrustedPathEntry{directory,
                                std::string("cannot be resolved: ") + std::strerror(errno),
                                "give an absolute path"};
    }
    absolute = std::string(cwd) + "/" + absolute;
  }
  std::deque<std::string> todo;
  auto walk_next = [&](const std::string& path) {
    const std::vector<std::string> parts = components(path);
    todo.insert(todo.begin(), parts.begin(), parts.end());
  };
  walk_next(absolute);
  // `current` is always a real directory reached from / through examined entries, so each of
  // its ancestors has been examined too.
  std::string current = "/";
  Examined state = examine_directory(current, trusted_uid);
  if (state.problem) return state.problem;
  int symlinks = 0;
  while (!todo.empty()) {
    const std::string name = todo.front();
    todo.pop_front();
    if (name == "..") {
      current = parent_of(current);
      state = examine_directory(current, trusted_uid);
      if (state.problem) return state.problem;
      continue;
    }
    const std::string next = join(current, name);
    struct stat info {};
    if (lstat(next.c_str(), &info) != 0) {
      return UntrustedPathEntry{next, std::string("cannot be examined: ") + std::strerror(errno),
                                "create it (owned by root, mode 0755), or choose another path"};
    }
    if (state.sticky_open && info.st_uid != 0 && info.st_uid != trusted_uid) {
      return UntrustedPathEntry{next,
                                "is owned by uid " + std::to_string(info.st_uid) + " inside " +
                                    current + ", which others can write",
                                "chown root " + next + ", or choose a path outside " + current};
    }
    if (S_ISLNK(info.st_mode)) {
      // The link's directory is trusted, so the link cannot change: follow it and examine
      // every directory it leads through.
      if (++symlinks > kMaxSymlinks) {
        return UntrustedPathEntry{next, "leads through too many symbolic links",
                                  "choose a path without a symbolic link loop"};
      }
      std::vector<char> target(PATH_MAX + 1);
      const ssize_t length = readlink(next.c_str(), target.data(), PATH_MAX);
      if (length <= 0) {
        return UntrustedPathEntry{next, "is a symbolic link that cannot be read",
                                  "choose another path"};
      }
      const std::string where(target.data(), static_cast<size_t>(length));
      if (where[0] == '/') {
        current = "/";
        state = examine_directory(current, trusted_uid);
        if (state.problem) return state.problem;
      }
      walk_next(where);
      continue;
    }
    state = examine_directory(next, trusted_uid);
    if (state.problem) return state.problem;
    current = next;
  }
  if (state.sticky_open) {
    // Sticky protects entries inside, not the directory's own new entries: anyone may create
    // (squat) a name in it.
    struct stat info {};
    lstat(current.c_str(), &info);
    return writable_entry(current, info.st_mode,
                          "chmod go-w " + current + ", or use a directory of its own inside it");
  }
  return std::nullopt;
}

}  // namespace zeus::zeusd
