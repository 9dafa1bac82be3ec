// open_store_url and default_store_url (server/store_url.h).
#include "server/store_url.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "zeus/store/store_factory.h"

namespace zeus::server {

Result<std::unique_ptr<Store>> open_store_url(const std::string& url, int max_connections) {
  if (url.rfind("sqlite://", 0) == 0) {
    Result<SqliteLocation> location = parse_sqlite_url(url);
    if (!location) return fail(location.error());
    const std::filesystem::path path = location->path;
    std::error_code ec;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
      return fail(ErrorCode::kUnavailable, "cannot create the folder of '" + path.string() +
                                               "': " + ec.message());
    }
  }
  StoreOptions options;
  options.max_connections = std::max(1, max_connections);
  return open_store(url, options);
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
