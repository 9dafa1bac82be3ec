// open_store_url and default_store_url (server/store_url.h).
#include "server/store_url.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "zeus/sqlite_store.h"

namespace zeus::server {

Result<std::unique_ptr<Store>> open_store_url(const std::string& url) {
  constexpr std::string_view kSqlite = "sqlite://";
  if (url == "memory://" || url == "memory:") return make_memory_store();
  if (url.rfind(kSqlite, 0) == 0) {
    const std::filesystem::path path = url.substr(kSqlite.size());
    if (path.empty()) {
      return fail(ErrorCode::kInvalidArgument,
                  "database URL '" + url + "' has no file; use sqlite:///path/to/bso.db");
    }
    std::error_code ec;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
      return fail(ErrorCode::kUnavailable, "cannot create the folder of '" + path.string() +
                                               "': " + ec.message());
    }
    return open_sqlite_store(path.string());
  }
  return fail(ErrorCode::kInvalidArgument,
              "database URL '" + url + "' is not supported; use sqlite:///path/to/bso.db, "
              "postgresql://user@host/db or memory://");
}

std::string default_store_url() {
  std::filesystem::path base;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg != nullptr && *xdg != '\0') {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    base = std::filesystem::path(home) / ".local" / "share";
  } else {
    base = ".";
  }
  return "sqlite://" + (base / "zeus" / "bso.db").string();
}

}  // namespace zeus::server
