// MysqlTransaction: one Store transaction on a MySQL/MariaDB connection (store-internal; the
// Store itself is mysql_store.cc).
//
// Isolation: the connection's READ COMMITTED with autocommit off, and each job's row locked
// (SELECT … FOR UPDATE, which reads the row in the same round trip) before the job is first read
// or written, so every transaction that touches an existing job sees and changes it alone. A job
// not found has no row to lock; writing it is then an INSERT, which fails with a duplicate key
// when another transaction created it meanwhile: that is a conflict (kRetry), and run again the
// transaction finds the job and locks it. Plain reads (list_jobs, a job's trials after its lock)
// see the latest committed rows and the transaction's own writes.
//
// Round trips: the lock-and-read of each job touched, its trials only when the store's copy is
// not current (the version column, store/postgres_job_cache.h), one per write, a version update
// per job whose trials alone were written, and COMMIT. Every statement is a prepared statement
// with bound values (store/mysql_connection.h).
//
// Database errors become Results and are remembered (the transaction is then aborted and COMMIT
// refused), with whether running the work again may succeed (deadlock, lock wait timeout, a
// duplicate job: kRetry; a connection lost before COMMIT: kReconnect). A lost connection reads
// "<doing>: lost the connection to <where> …; check that the server runs".
// Thread-safety: one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "store/mysql_connection.h"
#include "store/postgres_job_cache.h"
#include "zeus/optimizer/bso_store.h"

namespace zeus::store {

// Why a transaction attempt ended without committing.
enum class MysqlAbort { kNone, kRetry, kReconnect };

class MysqlTransaction final : public StoreTransaction {
 public:
  // where: the server as messages name it (the URL without its password; must outlive this).
  // cache (may be null, must outlive this): the store's copies of jobs, read when current and
  // updated after COMMIT.
  MysqlTransaction(MysqlConnection& c, std::string_view where, PostgresJobCache* cache = nullptr)
      : c_(c), where_(where), cache_(cache) {}
  ~MysqlTransaction() override;

  Result<std::optional<JobRecord>> get_job(std::string_view job_id) override;
  Result<std::vector<std::string>> list_jobs() override;
  Result<void> put_job(const JobRecord& job) override;
  Result<bool> delete_job(std::string_view job_id) override;
  Result<std::vector<Trial>> get_trials(std::string_view job_id) override;
  Result<void> put_trial(const Trial& t) override;
  // The job's row (locked) and, unless the store's copy is current, its trials.
  Result<std::optional<std::pair<JobRecord, std::vector<Trial>>>> get_job_with_trials(
      std::string_view job_id) override;

  // Whether the connection and the server answer (outside any transaction).
  Result<void> ping();

  // Writes the versions of the jobs written and COMMITs. kUnavailable "in doubt" when the
  // connection broke during COMMIT (whether it was stored is unknown: never run again).
  Result<void> commit();
  // Rolls back what was sent (nothing when nothing was); the connection stays usable unless it
  // broke.
  void rollback() noexcept;

  MysqlAbort abort() const { return abort_; }
  // The first database error of this transaction, if any (fn may have swallowed it).
  const std::optional<Error>& database_error() const { return database_error_; }

 private:
  // A job's row as locked: its version and record (nullopt: no such job).
  struct LockedRow {
    int64_t version = 0;
    std::string spec_json;
    std::string rng_state;
  };
  // Runs the statement, remembering a failure (and what running again may do).
  Result<MysqlOutcome> exec(const std::string& doing, const MysqlStatement& statement,
                            std::initializer_list<MysqlParam> params);
  // Locks and reads the job's row; nullopt when there is no such job.
  Result<std::optional<LockedRow>> lock_job(std::string_view job_id, const std::string& doing);
  Result<std::vector<Trial>> read_trials(std::string_view job_id, const std::string& doing);
  Result<JobRecord> record_of(std::string_view job_id, const LockedRow& row);
  tl::unexpected<Error> remember(ErrorCode code, const std::string& doing, const std::string& what);
  // remember() for a failed call, with what running again may do (abort_).
  tl::unexpected<Error> failed(const std::string& doing, const MysqlError& e);
  std::string connection_lost() const;  // "lost the connection to <where> (…)"
  void remember_committed();

  MysqlConnection& c_;
  std::string_view where_;
  PostgresJobCache* cache_;
  bool begun_ = false;  // a statement was sent: there is a transaction to end
  bool ended_ = false;
  std::map<std::string, bool, std::less<>> exists_;       // jobs locked: whether they exist now
  std::set<std::string, std::less<>> written_;            // jobs written (or deleted)
  std::set<std::string, std::less<>> versioned_;          // jobs given a new version already
  std::map<std::string, CachedJob, std::less<>> loaded_;  // jobs read, with this one's writes
  MysqlAbort abort_ = MysqlAbort::kNone;
  std::optional<Error> database_error_;
};

}  // namespace zeus::store
