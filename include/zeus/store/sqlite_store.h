// SqliteStore: the batch-size optimizer's Store in an SQLite file (library zeus_store_sqlite).
//
// WAL journal; transactions run inside `BEGIN IMMEDIATE`, so processes sharing the file
// serialise their read-decide-write (a writer waits up to busy_timeout_s for another). Concurrent
// Store::transact calls of one store are committed in groups (one SQLite transaction, a
// savepoint each; a failing fn undoes only its own writes), each answered after the commit. A
// transaction commits entirely or not at all, also when the process is killed mid-way. The store
// keeps what it read in memory and drops it when another connection has committed (PRAGMA
// data_version). The schema is versioned (PRAGMA user_version = 2; a version-1 file is upgraded
// in place); a newer file is refused.
// Thread-safety: one store may be used from several threads (transactions are serialised).
// Failure: kUnavailable when the file cannot be opened or stays locked, kNotSupported for an
// unknown schema version, kInternal for other SQLite errors (with SQLite's message).
//
//   zeus::Result<std::unique_ptr<zeus::Store>> store = zeus::open_sqlite_store("bso.db");
//   if (!store) return fail(store.error());
//   zeus::BatchSizeOptimizer bso(**store);
#pragma once

#include <memory>
#include <string>

#include "zeus/common/result.h"
#include "zeus/optimizer/bso_store.h"

namespace zeus {

struct SqliteStoreOptions {
  // true: PRAGMA synchronous=FULL (a commit survives power loss); false: NORMAL, where a commit
  // survives a crash of the process but the newest ones may be lost on power loss.
  bool durable = false;
  double busy_timeout_s = 30.0;  // how long a transaction waits for another process's lock
};

// Opens (creating if needed) the database file at path and its schema.
Result<std::unique_ptr<Store>> open_sqlite_store(const std::string& path,
                                                 const SqliteStoreOptions& options = {});

// The schema version this build writes and reads.
inline constexpr int kSqliteStoreSchemaVersion = 2;

}  // namespace zeus
