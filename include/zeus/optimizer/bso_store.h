// Store: where the batch-size optimizer keeps jobs and trials, behind one small interface.
//
// All access goes through transact(fn): fn's reads and writes form one atomic, isolated
// transaction (serialised with other threads and, for database stores, other processes); when fn
// returns an error, or the commit fails, none of its writes persist. The driver
// (zeus/optimizer/batch_size_optimizer.h) does each operation's read-decide-write in one
// transaction, so
// concurrent clients never get the same trial number. Implementations: make_memory_store() (this
// process only), open_sqlite_store() (zeus/store/sqlite_store.h), open_postgres_store()
// (zeus/store/postgres_store.h), open_mysql_store() (zeus/store/mysql_store.h) and open_store(url)
// (zeus/store/store_factory.h): SQLite in library zeus_store_sqlite, the other three in zeus_store.
// Thread-safety: transact may be called from any thread; a transaction object is used only
// inside its fn and fn must not call transact again. Failure: kUnavailable/kInternal from the
// database; kNotFound for a trial of an unknown job.
//
//   std::unique_ptr<zeus::Store> store = zeus::make_memory_store();
//   zeus::Result<void> r = store->transact([&](zeus::StoreTransaction& tx) -> zeus::Result<void> {
//     return tx.put_job({spec, rng_state}); });
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/optimizer/bso_types.h"

namespace zeus {

// A registered job: its validated spec (job_id set) and its random generator's saved state.
struct JobRecord {
  JobSpec spec;
  std::string rng_state;
  bool operator==(const JobRecord&) const = default;
};

// Reads and writes inside one transaction.
class StoreTransaction {
 public:
  virtual ~StoreTransaction() = default;
  // The job, or nullopt when there is none with that id.
  virtual Result<std::optional<JobRecord>> get_job(std::string_view job_id) = 0;
  // Every job id, ascending.
  virtual Result<std::vector<std::string>> list_jobs() = 0;
  // Inserts the job or replaces the one with the same spec.job_id (which must be set).
  virtual Result<void> put_job(const JobRecord& job) = 0;
  // Deletes the job and all its trials; false when there was no such job.
  virtual Result<bool> delete_job(std::string_view job_id) = 0;
  // The job's trials in ascending trial_number (empty for an unknown job).
  virtual Result<std::vector<Trial>> get_trials(std::string_view job_id) = 0;
  // Inserts the trial or replaces the one with the same (job_id, trial_number). kNotFound when
  // the job does not exist.
  virtual Result<void> put_trial(const Trial& trial) = 0;
  // The job and its trials (nullopt when there is no such job): get_job then get_trials, which a
  // store may answer in one round trip (PostgreSQL does).
  virtual Result<std::optional<std::pair<JobRecord, std::vector<Trial>>>> get_job_with_trials(
      std::string_view job_id);
};

class Store {
 public:
  virtual ~Store() = default;
  // Runs fn as one transaction and returns fn's error or the commit's; an exception fn throws
  // becomes a kInternal error (and its writes are undone). fn may run more than
  // once: PostgresStore and MysqlStore re-run it after a deadlock or conflict, so fn
  // must have no effect outside the transaction except (re)assigning its outputs. fn may run on
  // another thread than the caller's (SqliteStore runs a group of callers' fns on one of them),
  // so it must not rely on thread-local state; transact returns only after fn has finished.
  virtual Result<void> transact(const std::function<Result<void>(StoreTransaction&)>& fn) = 0;
  // Whether the store can serve transactions now (GET /healthz): ok, or the error a transaction
  // would get (kUnavailable "cannot connect to …" when a database server is down). Reads no job.
  // The default runs an empty transaction; PostgresStore sends one statement.
  virtual Result<void> ping();
};

// A store in this process's memory (tests, the simulator, a single-process service).
std::unique_ptr<Store> make_memory_store();

}  // namespace zeus
