// open_store(): URL -> Store (zeus/store_factory.h).
#include "zeus/store_factory.h"

#include <string_view>

#include "zeus/postgres_store.h"
#include "zeus/sqlite_store.h"

namespace zeus {
namespace {

constexpr std::string_view kAccepted =
    "use memory://, sqlite:///absolute/path.db, sqlite://relative/path.db or "
    "postgresql://user@host:port/database";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

Result<std::unique_ptr<Store>> open_store(const std::string& url, const StoreOptions& options) {
  const std::string_view u(url);
  if (u == "memory://") return make_memory_store();
  if (starts_with(u, "sqlite://")) {
    const std::string path(u.substr(std::string_view("sqlite://").size()));
    if (path.empty() || path == "/") {
      return fail(ErrorCode::kInvalidArgument,
                  "database URL '" + url + "' names no file; " + std::string(kAccepted));
    }
    return open_sqlite_store(path);
  }
  if (starts_with(u, "postgresql://") || starts_with(u, "postgres://")) {
    PostgresStoreOptions pg;
    pg.pool_size = options.max_connections;
    return open_postgres_store(url, pg);
  }
  const std::string shown = starts_with(u, "postgres") ? redact_database_url(url) : url;
  return fail(ErrorCode::kInvalidArgument,
              "unknown database URL '" + shown + "'; " + std::string(kAccepted));
}

}  // namespace zeus
