// open_store(): URL -> Store (zeus/store/store_factory.h).
#include "zeus/store/store_factory.h"

#include <charconv>
#include <string_view>
#include <system_error>

#include "store/mysql_url.h"
#include "zeus/common/redact_url.h"
#include "zeus/store/mysql_store.h"
#include "zeus/store/postgres_store.h"
#include "zeus/store/sqlite_store.h"

namespace zeus {
namespace {

constexpr std::string_view kAccepted =
    "use memory://, sqlite:///absolute/path.db, sqlite://relative/path.db, "
    "postgresql://user@host:port/database or mysql://user:password@host:port/database "
    "(also mariadb:// and mysql+<driver>://)";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// "synchronous=full&busy_timeout_s=5" -> options; unknown names and values are errors.
Result<void> parse_sqlite_options(const std::string& url, std::string_view query,
                                  SqliteStoreOptions* options) {
  constexpr std::string_view kKnown =
      "synchronous=normal|full (full: an answered write survives power loss; slower) and "
      "busy_timeout_s=SECONDS";
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const size_t eq = pair.find('=');
    const std::string_view name = pair.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? "" : pair.substr(eq + 1);
    auto bad = [&] {
      return fail(ErrorCode::kInvalidArgument, "database URL '" + redact_url(url) + "': option '" +
                                                   std::string(pair) + "' is not one of " +
                                                   std::string(kKnown));
    };
    if (name == "synchronous" && (value == "normal" || value == "full")) {
      options->durable = value == "full";
    } else if (name == "busy_timeout_s") {
      double seconds = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
      if (ec != std::errc() || end != value.data() + value.size() || !(seconds >= 0) ||
          seconds > 86400) {
        return bad();
      }
      options->busy_timeout_s = seconds;
    } else {
      return bad();
    }
  }
  return ok();
}

}  // namespace

Result<SqliteLocation> parse_sqlite_url(const std::string& url) {
  const std::string_view u(url);
  if (!starts_with(u, "sqlite://")) {
    return fail(ErrorCode::kInvalidArgument, "'" + redact_url(url) + "' is not an sqlite:// URL");
  }
  SqliteLocation out;
  out.path = std::string(u.substr(std::string_view("sqlite://").size()));
  if (const size_t q = out.path.find('?'); q != std::string::npos) {
    ZEUS_TRY(parse_sqlite_options(url, std::string_view(out.path).substr(q + 1), &out.options));
    out.path.resize(q);
  }
  if (out.path.empty() || out.path == "/") {
    return fail(ErrorCode::kInvalidArgument,
                "database URL '" + redact_url(url) + "' names no file; " + std::string(kAccepted));
  }
  return out;
}

Result<std::unique_ptr<Store>> open_store(const std::string& url, const StoreOptions& options) {
  const std::string_view u(url);
  if (u == "memory://") return make_memory_store();
  if (starts_with(u, "sqlite://")) {
    Result<SqliteLocation> location = parse_sqlite_url(url);
    if (!location) return fail(location.error());
    return open_sqlite_store(location->path, location->options);
  }
  if (starts_with(u, "postgresql://") || starts_with(u, "postgres://")) {
    PostgresStoreOptions pg;
    pg.pool_size = options.max_connections;
    return open_postgres_store(url, pg);
  }
  if (store::is_mysql_url(url)) {
    MysqlStoreOptions my;
    my.pool_size = options.max_connections;
    return open_mysql_store(url, my);
  }
  const std::string shown = redact_url(url);
  return fail(ErrorCode::kInvalidArgument,
              "unknown database URL '" + shown + "'; " + std::string(kAccepted));
}

}  // namespace zeus
