// open_store(): picks the Store implementation from a database URL (library zeus_store).
//
// URLs: "memory://" (this process only, lost at exit), "sqlite:///abs/path/bso.db" (absolute),
// "sqlite://relative/bso.db" (relative to the working folder), each optionally followed by
// "?synchronous=full" (an answered write survives power loss, not only a crash of the process)
// and/or "&busy_timeout_s=S" (zeus/store/sqlite_store.h), "postgresql://..." or
// "postgres://..." (passed to libpq as it is; see zeus/store/postgres_store.h),
// "mysql://user:password@host:port/db", "mariadb://..." or SQLAlchemy's "mysql+<driver>://..."
// (MySQL or MariaDB, optionally "?unix_socket=/path"; see zeus/store/mysql_store.h). Anything else
// is
// kInvalidArgument listing the accepted forms. Thread-safety: open_store may be called from any
// thread; the store it returns is as thread-safe as its implementation (all are).
// Failure: kInvalidArgument for a bad URL, otherwise the opened store's errors.
//
//   zeus::Result<std::unique_ptr<zeus::Store>> store =
//   zeus::open_store("sqlite:///var/zeus/bso.db"); if (!store) return fail(store.error());
//   zeus::BatchSizeOptimizer bso(**store);
#pragma once

#include <memory>
#include <string>

#include "zeus/common/result.h"
#include "zeus/optimizer/bso_store.h"
#include "zeus/store/sqlite_store.h"

namespace zeus {

struct StoreOptions {
  int max_connections = 8;  // PostgreSQL, MySQL: connections kept open (e.g. the server's workers)
};

// An sqlite:// URL taken apart: the file and the options its query names.
struct SqliteLocation {
  std::string path;
  SqliteStoreOptions options;
};
Result<SqliteLocation> parse_sqlite_url(const std::string& url);

// Opens the store that url names (creating an SQLite file or the PostgreSQL or MySQL tables if
// needed).
Result<std::unique_ptr<Store>> open_store(const std::string& url, const StoreOptions& options = {});

}  // namespace zeus
