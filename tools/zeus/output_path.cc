#include "output_path.h"

#include <unistd.h>

#include <fstream>

#include "cli_parse.h"

namespace zeus::cli {
namespace fs = std::filesystem;
namespace {

// "a symbolic link to 'X'", with ", which does not exist" when it dangles.
std::string link_words(const fs::path& path) {
  std::error_code ec;
  const fs::path to = fs::read_symlink(path, ec);
  if (ec) return "a symbolic link";
  const bool exists = fs::exists(path, ec);  // follows the link
  return "a symbolic link to '" + echo_value(to.string()) + "'" +
         (exists ? "" : ", which does not exist");
}

// What is at `path` (not following a final link); kPermissionDenied when that cannot be told.
Result<fs::file_type> type_at(const std::string& named, const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(path, ec);
  if (status.type() == fs::file_type::none) {
    return fail(ErrorCode::kPermissionDenied, "cannot examine " + named + ": " + ec.message());
  }
  return status.type();
}

}  // namespace

std::string file_type_words(fs::file_type type) {
  switch (type) {
    case fs::file_type::regular:
      return "a regular file";
    case fs::file_type::directory:
      return "a folder";
    case fs::file_type::symlink:
      return "a symbolic link";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::fifo:
      return "a FIFO (named pipe)";
    case fs::file_type::socket:
      return "a socket";
    case fs::file_type::not_found:
      return "nothing";
    default:
      return "neither a file nor a folder";
  }
}

Result<fs::path> output_folder(const std::string& option, const fs::path& path) {
  if (path.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                option + " is empty: name a new folder for the results, e.g. " + option + " plans");
  }
  const std::string named = option + " '" + echo_value(path.string()) + "'";
  fs::path target = path;
  while (!target.has_filename() && target.has_relative_path()) target = target.parent_path();
  const fs::path name = target.filename();
  if (name.empty() || name == "." || name == "..") {
    return fail(ErrorCode::kInvalidArgument,
                named +
                    " does not name a folder of its own (the root, or a path ending in '.' or "
                    "'..'); give the new folder's name, e.g. " +
                    option + " plans");
  }
  auto type = type_at(named, target);
  if (!type) return fail(type.error());
  switch (*type) {
    case fs::file_type::not_found:
      return target;
    case fs::file_type::directory: {
      std::error_code ec;
      const bool empty = fs::is_empty(target, ec);
      if (ec) {
        return fail(ErrorCode::kPermissionDenied, "cannot list " + named + ": " + ec.message());
      }
      if (!empty) {
        return fail(ErrorCode::kInvalidArgument,
                    named + " exists and is not empty (choose a new folder; nothing was written)");
      }
      return target;
    }
    case fs::file_type::symlink:
      return fail(ErrorCode::kInvalidArgument,
                  named + " is " + link_words(target) +
                      "; give the path of a new or empty folder itself, not a link (nothing "
                      "was written)");
    default:
      return fail(ErrorCode::kInvalidArgument,
                  named + " is " + file_type_words(*type) +
                      ", not a folder; name a new folder for the results (nothing was written)");
  }
}

Result<fs::path> output_file(const std::string& option, const fs::path& path) {
  if (path.empty()) {
    return fail(ErrorCode::kInvalidArgument, option + " is empty: name the file to write");
  }
  const std::string named = option + " '" + echo_value(path.string()) + "'";
  auto type = type_at(named, path);
  if (!type) return fail(type.error());
  switch (*type) {
    case fs::file_type::not_found:
    case fs::file_type::regular:
      return path;
    case fs::file_type::symlink:
      return fail(ErrorCode::kInvalidArgument,
                  named + " is " + link_words(path) +
                      "; give the file's own path, not a link (nothing was written)");
    default:
      return fail(ErrorCode::kInvalidArgument,
                  named + " is " + file_type_words(*type) +
                      ", not a regular file; name a file to write (nothing was written)");
  }
}

Result<void> write_file_replacing(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path temp = path.string() + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream file(temp);
    file << text;
    if (!file.flush()) {
      std::error_code ignored;
      std::filesystem::remove(temp, ignored);
      return fail(ErrorCode::kUnavailable, "cannot write " + temp.string());
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) return fail(ErrorCode::kUnavailable, "cannot write " + path.string() + ": " + ec.message());
  return ok();
}

}  // namespace zeus::cli
