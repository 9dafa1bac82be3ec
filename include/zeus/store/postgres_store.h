// PostgresStore: the batch-size optimizer's Store on a PostgreSQL server (library zeus_store),
// for several `zeus serve` replicas sharing one database.
//
// Every Store::transact is one READ COMMITTED transaction that takes a lock per job (a
// transaction-scoped advisory lock) before it first reads or writes the job: transactions on the
// same job, in this process or another replica, take turns; on different jobs they never wait
// for each other. A request costs two round trips (BEGIN, lock and read together; the writes with
// COMMIT); concurrent transactions run in parallel on the pool's connections. When PostgreSQL aborts a transaction all the same — a deadlock 40P01 between replicas
// that lock two jobs in opposite orders, or a serialization failure 40001 — the store rolls back
// and runs fn again, with a short random back-off, until it commits or retry_timeout_s has
// passed. So fn MAY RUN MORE THAN ONCE: it must have no effect
// outside the transaction except assigning its outputs (the BatchSizeOptimizer's operations
// are written that way). transact returns only after COMMIT succeeded: an answered operation is
// durable on the server. A lost connection is replaced by a new one (and fn re-run) when it broke
// before COMMIT, so a server that went away is reported as "cannot connect to <URL>…" on every
// path (ping() too); when it broke during COMMIT the outcome is unknown and transact says so.
// Tables: jobs (with a version: a new random value at every write, against which each store
// checks its copy of the job — a request re-reads a job's trials only when another process
// changed them), trials (the same columns as SqliteStore), zeus_schema (version 2; a version-1
// database is upgraded in place); created at open under a lock, so replicas may start together.
// A newer schema version is refused (so is a version-2 database by a version-1 build).
// Thread-safety: one store may be used from many threads; it keeps up to pool_size connections
// (a thread waits for a free one). Failure: kUnavailable when the server cannot be reached or
// conflicts persist past retry_timeout_s, kNotSupported for a newer schema, kNotFound as the
// Store contract says, kInternal for other database errors (with PostgreSQL's message).
//
//   zeus::Result<std::unique_ptr<zeus::Store>> store =
//       zeus::open_postgres_store("postgresql://zeus@127.0.0.1:5432/zeus");
//   zeus::BatchSizeOptimizer bso(**store);
#pragma once

#include <memory>
#include <string>

#include "zeus/common/result.h"
#include "zeus/optimizer/bso_store.h"

namespace zeus {

struct PostgresStoreOptions {
  int pool_size = 8;              // connections kept open (>= 1); more threads wait for one
  std::string schema;             // "": the connection's search_path; else this schema, created
                                  // if missing ([a-z_][a-z0-9_]*, e.g. one per test)
  double retry_timeout_s = 30.0;  // how long transact re-runs fn after deadlocks or conflicts
};

// Connects to url (a libpq URI "postgresql://user[:password]@host:port/db?param=..." or a
// "key=value" connection string) and creates the schema if needed.
Result<std::unique_ptr<Store>> open_postgres_store(const std::string& url,
                                                   const PostgresStoreOptions& options = {});

// The schema version this build writes and reads (table zeus_schema).
inline constexpr int kPostgresStoreSchemaVersion = 2;


}  // namespace zeus
