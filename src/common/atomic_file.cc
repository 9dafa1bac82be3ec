// Whole-file writes by rename (common/atomic_file.h).
#include "common/atomic_file.h"

#include <unistd.h>

#include <fstream>
#include <string>
#include <system_error>

namespace zeus {

Result<void> write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) {
    return fail(ErrorCode::kPermissionDenied,
                "cannot create the folder of " + path.string() + ": " + ec.message());
  }
  const fs::path temporary = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) {
      fs::remove(temporary, ec);
      return fail(ErrorCode::kPermissionDenied,
                  "cannot write " + path.string() + " (check the folder's permissions and space)");
    }
  }
  fs::rename(temporary, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    return fail(ErrorCode::kPermissionDenied,
                "cannot write " + path.string() + ": " + ec.message());
  }
  return ok();
}

}  // namespace zeus
