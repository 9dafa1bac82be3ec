// MysqlStore: the batch-size optimizer's Store on a MySQL or MariaDB server (library zeus_store,
// through MariaDB's C connector), for several `zeus serve` replicas sharing one database, as
// PostgresStore (zeus/store/postgres_store.h) does on PostgreSQL.
//
// Every Store::transact is one InnoDB transaction at READ COMMITTED that locks each job's row
// (SELECT … FOR UPDATE) before it first reads or writes the job, in the same statement that reads
// it: transactions on the same job, in this process or another replica, take turns; on different
// jobs they never wait for each other. A job that does not exist yet has no row to lock: its
// creation is an INSERT, so of two transactions creating it the second finds the first's row
// (duplicate key) and runs again, now seeing the job. When InnoDB aborts a transaction all the
// same — a deadlock between replicas that lock two jobs in opposite orders (1213), a lock wait
// past innodb_lock_wait_timeout (1205) — the store rolls back and runs fn again, with a short
// random back-off, until it commits or retry_timeout_s has passed. So fn MAY RUN MORE THAN ONCE
// (the Store contract). transact returns only after COMMIT succeeded: an answered operation is
// durable on the server (with the server's default innodb_flush_log_at_trx_commit = 1). A lost
// connection is replaced by a new one (and fn re-run) when it broke before COMMIT, so a server
// that went away is reported as "cannot connect to <URL>…" on every path (ping() too); when it
// broke during COMMIT the outcome is unknown and transact says so.
// Statements are prepared (mysql_stmt_*) once per connection and every value travels as a bound
// parameter; the connection uses utf8mb4, strict SQL mode and no automatic reconnection.
// Tables (InnoDB, created at open under a named lock, so replicas may start together): jobs
// (job_id VARBINARY(1024): compared byte for byte, as SQLite and PostgreSQL do; a version that
// gets a new random value at every write, against which each store checks its copy of the job),
// trials (the same columns as the other stores; doubles read back bit for bit, but finite ones
// only, MySQL having no infinity or NaN, and -0 as 0), zeus_schema (version 1). A newer schema
// version, or tables of another engine than InnoDB, are refused. Thread-safety: one store may be
// used from many threads; it keeps up to pool_size connections (a thread waits for a free one).
// Failure: kUnavailable when the server cannot be reached or conflicts persist past
// retry_timeout_s, kNotSupported for a newer schema or a non-InnoDB table, kInvalidArgument for a
// job id over 1024 bytes or a non-finite double, kNotFound as the Store contract says, kInternal
// for other database errors (with the server's message). A password never appears in a message
// (redact_url, zeus/common/redact_url.h).
//
//   zeus::Result<std::unique_ptr<zeus::Store>> store =
//       zeus::open_mysql_store("mysql://zeus:secret@db.internal:3306/zeus");
//   zeus::BatchSizeOptimizer bso(**store);
#pragma once

#include <memory>
#include <string>

#include "zeus/common/result.h"
#include "zeus/optimizer/bso_store.h"

namespace zeus {

struct MysqlStoreOptions {
  int pool_size = 8;              // connections kept open (>= 1); more threads wait for one
  double retry_timeout_s = 30.0;  // how long transact re-runs fn after deadlocks or lock waits
};

// Connects to url and creates the tables if needed. url: "mysql://user:password@host:port/db",
// "mariadb://…" or SQLAlchemy's "mysql+<driver>://…" (the driver is ignored); user, password
// and database percent-decoded; port 3306 when omitted; host "localhost" without a port or
// socket means the client library's default socket. Query parameters: unix_socket=/path (connect
// through that socket; the host may then be empty: "mysql://u:p@/db?unix_socket=/run/x.sock"),
// charset=utf8mb4 (the only one; utf8 is taken as utf8mb4), connect_timeout=SECONDS.
Result<std::unique_ptr<Store>> open_mysql_store(const std::string& url,
                                                const MysqlStoreOptions& options = {});

// The schema version this build writes and reads (table zeus_schema).
inline constexpr int kMysqlStoreSchemaVersion = 1;

// The longest job id the store keeps, in bytes (the key column's size).
inline constexpr size_t kMysqlStoreMaxJobIdBytes = 1024;

}  // namespace zeus
