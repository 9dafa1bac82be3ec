#include "common/sysfs.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace zeus {
namespace {

Error errno_error(int err, const std::string& path) {
  if (err == EACCES || err == EPERM) {
    return Error{ErrorCode::kPermissionDenied,
                 "cannot read " + path + ": " + std::strerror(err) +
                     " (run as root, or have the administrator grant read access)"};
  }
  if (err == ENOENT || err == ENOTDIR) {
    return Error{ErrorCode::kNotFound, path + " does not exist"};
  }
  return Error{ErrorCode::kInternal, "cannot read " + path + ": " + std::strerror(err)};
}

}  // namespace

Result<std::string> read_text_file(const std::string& path) {
  errno = 0;
  std::ifstream in(path);
  if (!in) return fail(errno_error(errno != 0 ? errno : ENOENT, path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return fail(errno_error(errno != 0 ? errno : EIO, path));
  std::string text = buffer.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t' ||
                           text.back() == '\r')) {
    text.pop_back();
  }
  return text;
}

Result<uint64_t> read_uint64_file(const std::string& path) {
  auto text = read_text_file(path);
  if (!text) return fail(text.error());
  if (text->empty() || text->find_first_not_of("0123456789") != std::string::npos) {
    return fail(ErrorCode::kInternal, path + " holds '" + *text + "', not an unsigned integer");
  }
  errno = 0;
  unsigned long long value = std::strtoull(text->c_str(), nullptr, 10);
  if (errno == ERANGE) return fail(ErrorCode::kInternal, path + " holds a value out of range");
  return static_cast<uint64_t>(value);
}

Result<std::vector<std::string>> list_directory(const std::string& path) {
  errno = 0;
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return fail(errno_error(errno, path));
  std::vector<std::string> names;
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace zeus
