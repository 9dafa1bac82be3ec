// PostgresTransaction: one Store transaction over a PostgreSQL connection in as few round trips
// as its work allows (store-internal; the Store itself is postgres_store.cc).
//
// Isolation: READ COMMITTED, with a transaction-scoped advisory lock per job taken before the
// job is first read or written, so every transaction that touches a job sees and changes it
// alone — the same guarantee SERIALIZABLE gave, without false conflicts between jobs (which
// SERIALIZABLE reports when their rows share an index page).
//
// Round trips: nothing is sent until a value is needed. BEGIN and the lock travel with the first
// read; writes are held back and travel with the next read or with COMMIT. So a request that
// reads its job and writes a trial costs two round trips: "BEGIN; lock; read" and
// "writes; COMMIT". Statements are prepared once per connection (prepare_statements) and run as
// EXECUTE with literals quoted by libpq. A write whose effect must be known at once (a trial of
// a job not read in this transaction, a delete) is sent at once. A transaction that reads nothing
// sends its writes, then COMMIT (so that a connection closed while idle is found before COMMIT).
//
// Database errors become Results and are remembered (the transaction is then aborted), with
// whether running the work again may succeed (deadlock, serialization failure: kRetry; a lost
// connection before COMMIT: kReconnect). A lost connection reads "<doing>: lost the connection to
// <where> …; check that the server runs", in our words: libpqxx's for it are internal ("Could not
// obtain client encoding: not connected.").
// Thread-safety: one thread at a time.
#pragma once

#include <map>
#include <optional>
#include <pqxx/pqxx>
#include <set>
#include <string>

#include "store/postgres_job_cache.h"
#include "zeus/optimizer/bso_store.h"

namespace zeus::store {

// Prepares the statements PostgresTransaction runs, on a new connection (one round trip).
void prepare_statements(pqxx::connection& c);

bool is_retryable(const std::string& sqlstate);

// libpq's message of e on one line: its lines ("ERROR: …", "DETAIL: …", "Is the server
// running…?") trimmed and joined with "; ".
std::string database_message(const std::exception& e);

// Why a transaction attempt ended without committing.
enum class Abort { kNone, kRetry, kReconnect };

class PostgresTransaction final : public StoreTransaction {
 public:
  // where: the server as messages name it (the URL without its password; must outlive this).
  // cache (may be null, must outlive this): the store's copies of jobs, read when current and
  // updated after COMMIT.
  PostgresTransaction(pqxx::connection& c, std::string_view where,
                      PostgresJobCache* cache = nullptr)
      : tx_(c), where_(where), cache_(cache) {}
  ~PostgresTransaction() override;

  Result<std::optional<JobRecord>> get_job(std::string_view job_id) override;
  Result<std::vector<std::string>> list_jobs() override;
  Result<void> put_job(const JobRecord& job) override;
  Result<bool> delete_job(std::string_view job_id) override;
  Result<std::vector<Trial>> get_trials(std::string_view job_id) override;
  Result<void> put_trial(const Trial& t) override;
  // One query (the job LEFT JOIN its trials) instead of two.
  Result<std::optional<std::pair<JobRecord, std::vector<Trial>>>> get_job_with_trials(
      std::string_view job_id) override;

  // One statement that reads nothing (SELECT 1), outside any transaction: whether the connection
  // and the server answer.
  Result<void> ping();

  // Sends what is held back and COMMIT. kUnavailable "in doubt" when the connection broke during
  // COMMIT (whether it was stored is unknown: never run again).
  Result<void> commit();
  // Rolls back what was sent (nothing when nothing was); the connection stays usable unless it
  // broke.
  void rollback() noexcept;

  // Set when a statement failed in a way that transact handles by running fn again.
  Abort abort() const { return abort_; }
  // The first database error of this transaction, if any (fn may have swallowed it).
  const std::optional<Error>& database_error() const { return database_error_; }

 private:
  template <typename F>
  auto guard(const std::string& doing, F&& body) -> decltype(body());
  // Sends the held-back statements and then `statement`; returns the last one's result.
  pqxx::result send(const std::string& statement);
  void hold(const std::string& statement);
  void lock_job(std::string_view job_id);
  // After COMMIT: the jobs read go to the cache (with this transaction's writes and versions),
  // the ones written but not read leave it.
  void remember_committed();
  std::string quote(std::string_view text) { return tx_.quote(std::string(text)); }
  tl::unexpected<Error> remember(ErrorCode code, const std::string& doing, const std::string& what);
  // remember() for a connection found broken: kUnavailable, and transact may run fn again on a
  // new connection (kReconnect).
  tl::unexpected<Error> lost_connection(const std::string& doing);
  std::string connection_lost() const;  // "lost the connection to <where> (…)"

  pqxx::nontransaction tx_;                      // only sends text; BEGIN/COMMIT are ours
  std::string_view where_;                       // the server, for messages
  std::string held_;                             // statements not sent yet, each ending in ';'
  bool begun_ = false;                           // BEGIN has reached the server
  bool ended_ = false;                           // committed or rolled back
  std::set<std::string, std::less<>> locked_;    // jobs whose lock is taken (or held back)
  std::set<std::string, std::less<>> existing_;  // jobs known to exist, under their lock
  PostgresJobCache* cache_;
  std::map<std::string, CachedJob, std::less<>> loaded_;  // jobs read, with this one's writes
  std::set<std::string, std::less<>> written_;            // jobs written (or deleted)
  Abort abort_ = Abort::kNone;
  std::optional<Error> database_error_;
};

}  // namespace zeus::store
