// open_sqlite_store(): the Store over SQLite (zeus/store/sqlite_store.h). All SQL of the batch-size
// optimizer lives in this file.
#include "zeus/store/sqlite_store.h"

#include <sqlite3.h>

#include <exception>
#include <iterator>
#include <span>

#include "store/sqlite/group_commit.h"
#include "store/sqlite/job_cache.h"
#include "store/sqlite/sqlite_statement.h"
#include "zeus/wire/bso_json.h"

namespace zeus {
namespace {

using store::GroupCommit;
using store::JobCache;
using store::sqlite_error;
using store::sqlite_exec;
using store::Statement;
using store::StatementCache;

constexpr const char* kSqliteSchema = R"sql(
CREATE TABLE IF NOT EXISTS jobs (
  job_id     TEXT PRIMARY KEY,
  spec_json  TEXT NOT NULL,
  rng_state  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS trials (
  job_id        TEXT NOT NULL REFERENCES jobs(job_id) ON DELETE CASCADE,
  trial_number  INTEGER NOT NULL,
  batch_size    INTEGER NOT NULL,
  kind          TEXT NOT NULL,
  pruning_round INTEGER NOT NULL,
  status        TEXT NOT NULL,
  time_s        REAL NOT NULL,
  energy_j      REAL NOT NULL,
  cost          REAL NOT NULL,
  epochs        INTEGER NOT NULL,
  metric        REAL NOT NULL,
  dispatched_unix_s REAL NOT NULL DEFAULT 0,
  PRIMARY KEY (job_id, trial_number)
);
)sql";

// Version 1 -> 2: the dispatch time of each trial (trial expiry). Trials dispatched before the
// upgrade count as dispatched at the upgrade, so they get a full timeout from then.
constexpr const char* kMigrateV1ToV2 = R"sql(
ALTER TABLE trials ADD COLUMN dispatched_unix_s REAL NOT NULL DEFAULT 0;
UPDATE trials SET dispatched_unix_s = CAST(strftime('%s', 'now') AS REAL)
  WHERE status = 'dispatched';
)sql";

// The statements transactions run, by Sql index.
enum Sql : size_t {
  kGetJob,
  kListJobs,
  kPutJob,
  kSetRngState,
  kDeleteTrials,
  kDeleteJob,
  kGetTrials,
  kJobExists,
  kPutTrial,
  kBegin,
  kCommit,
  kRollback,
  kDataVersion,
  kSavepoint,
  kRollbackToSavepoint,
  kReleaseSavepoint,
  kSqlCount
};

constexpr const char* kSqlText[] = {
    "SELECT spec_json, rng_state FROM jobs WHERE job_id = ?1",
    "SELECT job_id FROM jobs ORDER BY job_id",
    "INSERT INTO jobs (job_id, spec_json, rng_state) VALUES (?1, ?2, ?3) "
    "ON CONFLICT (job_id) DO UPDATE SET spec_json = excluded.spec_json, "
    "rng_state = excluded.rng_state",
    "UPDATE jobs SET rng_state = ?3 WHERE job_id = ?1",  // ?2 (the spec) unused
    "DELETE FROM trials WHERE job_id = ?1",
    "DELETE FROM jobs WHERE job_id = ?1",
    "SELECT trial_number, batch_size, kind, pruning_round, status, time_s, energy_j, cost, "
    "epochs, metric, dispatched_unix_s FROM trials WHERE job_id = ?1 ORDER BY trial_number",
    "SELECT 1 FROM jobs WHERE job_id = ?1",
    "INSERT INTO trials (job_id, trial_number, batch_size, kind, pruning_round, status, time_s, "
    "energy_j, cost, epochs, metric, dispatched_unix_s) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
    "ON CONFLICT (job_id, trial_number) DO UPDATE SET "
    "batch_size = excluded.batch_size, kind = excluded.kind, "
    "pruning_round = excluded.pruning_round, status = excluded.status, "
    "time_s = excluded.time_s, energy_j = excluded.energy_j, cost = excluded.cost, "
    "epochs = excluded.epochs, metric = excluded.metric, "
    "dispatched_unix_s = excluded.dispatched_unix_s",
    "BEGIN IMMEDIATE",
    "COMMIT",
    "ROLLBACK",
    "PRAGMA data_version",
    "SAVEPOINT item",
    "ROLLBACK TO item",
    "RELEASE item",
};
static_assert(std::size(kSqlText) == kSqlCount);

// Reads come from the store's JobCache when it holds the job, else from the database (and then
// fill the cache); writes go to the database, then to the cache.
class SqliteTransaction final : public StoreTransaction {
 public:
  SqliteTransaction(StatementCache& statements, JobCache& cache)
      : statements_(statements), cache_(cache), db_(statements.db()) {}

  // Whether fn tried to write (so a rollback may leave the cache ahead of the database).
  bool wrote() const { return wrote_; }

  Result<std::optional<JobRecord>> get_job(std::string_view job_id) override {
    if (const JobRecord* cached = cache_.job(job_id)) return std::optional<JobRecord>(*cached);
    Statement st(statements_, kGetJob);
    if (!st.ok()) return sqlite_error(db_, "preparing get_job");
    st.bind(1, job_id);
    const int rc = st.step();
    if (rc == SQLITE_DONE) return std::optional<JobRecord>();
    if (rc != SQLITE_ROW) return sqlite_error(db_, "reading job '" + std::string(job_id) + "'");
    Result<JobSpec> spec = job_spec_from_json(st.text_view(0));
    if (!spec) {
      return fail(ErrorCode::kInternal, "sqlite store: job '" + std::string(job_id) +
                                            "' has an unreadable spec: " + spec.error().message);
    }
    JobRecord record{std::move(*spec), st.text(1)};
    record.spec.job_id = std::string(job_id);
    cache_.put_job(record);
    return std::optional<JobRecord>(std::move(record));
  }

  Result<std::vector<std::string>> list_jobs() override {
    Statement st(statements_, kListJobs);
    if (!st.ok()) return sqlite_error(db_, "preparing list_jobs");
    std::vector<std::string> ids;
    int rc;
    while ((rc = st.step()) == SQLITE_ROW) ids.push_back(st.text(0));
    if (rc != SQLITE_DONE) return sqlite_error(db_, "listing jobs");
    return ids;
  }

  Result<void> put_job(const JobRecord& job) override {
    if (!job.spec.job_id) return fail(ErrorCode::kInvalidArgument, "put_job needs a job_id");
    wrote_ = true;
    // Only the generator moved (every dispatch): then the spec need not be written again.
    const JobRecord* cached = cache_.job(*job.spec.job_id);
    const bool spec_unchanged = cached != nullptr && cached->spec == job.spec;
    Statement st(statements_, spec_unchanged ? kSetRngState : kPutJob);
    if (!st.ok()) return sqlite_error(db_, "preparing put_job");
    st.bind(1, *job.spec.job_id);
    if (!spec_unchanged) st.bind(2, job_spec_to_json(job.spec));
    st.bind(3, job.rng_state);
    if (st.step() != SQLITE_DONE) return sqlite_error(db_, "writing job '" + *job.spec.job_id + "'");
    cache_.put_job(job);
    return ok();
  }

  Result<bool> delete_job(std::string_view job_id) override {
    wrote_ = true;
    cache_.erase_job(job_id);
    Statement trials(statements_, kDeleteTrials);
    Statement jobs(statements_, kDeleteJob);
    if (!trials.ok() || !jobs.ok()) return sqlite_error(db_, "preparing delete_job");
    trials.bind(1, job_id);
    jobs.bind(1, job_id);
    if (trials.step() != SQLITE_DONE || jobs.step() != SQLITE_DONE) {
      return sqlite_error(db_, "deleting job '" + std::string(job_id) + "'");
    }
    return sqlite3_changes(db_) > 0;
  }

  Result<std::vector<Trial>> get_trials(std::string_view job_id) override {
    if (const std::vector<Trial>* cached = cache_.trials(job_id)) return *cached;
    Statement st(statements_, kGetTrials);
    if (!st.ok()) return sqlite_error(db_, "preparing get_trials");
    st.bind(1, job_id);
    std::vector<Trial> trials;
    int rc;
    while ((rc = st.step()) == SQLITE_ROW) {
      Trial t;
      t.job_id = std::string(job_id);
      t.trial_number = static_cast<int>(st.integer(0));
      t.batch_size = static_cast<int>(st.integer(1));
      const std::string_view kind = st.text_view(2), status = st.text_view(4);
      if (!parse_trial_kind(kind, &t.kind) || !parse_trial_status(status, &t.status)) {
        return fail(ErrorCode::kInternal, "sqlite store: trial " + std::to_string(t.trial_number) +
                                              " of job '" + t.job_id + "' has kind '" +
                                              std::string(kind) + "' and status '" +
                                              std::string(status) + "'");
      }
      t.pruning_round = static_cast<int>(st.integer(3));
      t.time_s = st.real(5);
      t.energy_j = st.real(6);
      t.cost = st.real(7);
      t.epochs = static_cast<int>(st.integer(8));
      t.metric = st.real(9);
      t.dispatched_unix_s = st.real(10);
      trials.push_back(std::move(t));
    }
    if (rc != SQLITE_DONE) {
      return sqlite_error(db_, "reading trials of '" + std::string(job_id) + "'");
    }
    cache_.put_trials(job_id, trials);
    return trials;
  }

  Result<void> put_trial(const Trial& t) override {
    wrote_ = true;
    if (cache_.job(t.job_id) == nullptr) {
      Statement exists(statements_, kJobExists);
      if (!exists.ok()) return sqlite_error(db_, "preparing put_trial");
      exists.bind(1, t.job_id);
      const int found = exists.step();
      if (found == SQLITE_DONE) {
        return fail(ErrorCode::kNotFound, "no job '" + t.job_id + "' to add a trial to");
      }
      if (found != SQLITE_ROW) return sqlite_error(db_, "looking up job '" + t.job_id + "'");
    }
    Statement st(statements_, kPutTrial);
    if (!st.ok()) return sqlite_error(db_, "preparing put_trial");
    st.bind(1, t.job_id);
    st.bind(2, t.trial_number);
    st.bind(3, t.batch_size);
    st.bind(4, trial_kind_name(t.kind));
    st.bind(5, t.pruning_round);
    st.bind(6, trial_status_name(t.status));
    st.bind(7, t.time_s);
    st.bind(8, t.energy_j);
    st.bind(9, t.cost);
    st.bind(10, t.epochs);
    st.bind(11, t.metric);
    st.bind(12, t.dispatched_unix_s);
    if (st.step() != SQLITE_DONE) {
      return sqlite_error(
          db_, "writing trial " + std::to_string(t.trial_number) + " of job '" + t.job_id + "'");
    }
    cache_.put_trial(t);
    return ok();
  }

 private:
  StatementCache& statements_;
  JobCache& cache_;
  sqlite3* db_;
  bool wrote_ = false;
};

// One connection. Concurrent transactions are batched by a GroupCommit: its leader runs a batch
// in one SQLite transaction (BEGIN IMMEDIATE serialises it against other connections), each fn in
// a savepoint. The JobCache is valid while PRAGMA data_version (which changes when another
// connection commits) stays the same and every write since was committed.
class SqliteStore final : public Store {
 public:
  explicit SqliteStore(sqlite3* db)
      : db_(db),
        statements_(std::make_unique<StatementCache>(db, kSqlText)),
        group_([this](std::span<GroupCommit::Item* const> batch) { run_batch(batch); }) {}
  ~SqliteStore() override {
    statements_.reset();  // statements are finalized before their connection closes
    sqlite3_close_v2(db_);
  }

  Result<void> transact(const std::function<Result<void>(StoreTransaction&)>& fn) override {
    return group_.run(fn);
  }

 private:
  void run_batch(std::span<GroupCommit::Item* const> batch) {
    size_t next = 0;
    while (next < batch.size()) next = run_transaction(batch, next);
  }

  // Runs batch[first...] in one transaction; returns where to go on (before the end only when
  // SQLite rolled the transaction back by itself, as it does on some I/O errors: the items it
  // took with it fail, and the rest get a new transaction).
  size_t run_transaction(std::span<GroupCommit::Item* const> batch, size_t first) {
    auto fail_from = [&](size_t from, size_t to, const Error& error) {
      for (size_t i = from; i < to; ++i) {
        if (batch[i]->result) batch[i]->result = tl::unexpected(error);
      }
    };
    if (sqlite3_get_autocommit(db_) == 0) {  // left open by a batch that did not finish
      run(kRollback);
      cache_.clear();
    }
    if (!run(kBegin)) {
      fail_from(first, batch.size(),
                sqlite_error(db_,
                             "starting a transaction (another process may hold the "
                             "database longer than busy_timeout_s)")
                    .value());
      return batch.size();
    }
    if (Result<void> checked = check_cache(); !checked) {
      run(kRollback);
      fail_from(first, batch.size(), checked.error());
      return batch.size();
    }
    bool any_ok = false;
    for (size_t i = first; i < batch.size(); ++i) {
      GroupCommit::Item& item = *batch[i];
      SqliteTransaction tx(*statements_, cache_);
      item.result =
          run(kSavepoint) ? run_fn(*item.fn, tx) : sqlite_error(db_, "starting a savepoint");
      if (sqlite3_get_autocommit(db_) != 0) {
        cache_.clear();
        fail_from(
            first, i + 1,
            Error{ErrorCode::kUnavailable, "sqlite store: SQLite rolled the transaction back (" +
                                               std::string(sqlite3_errmsg(db_)) + "); retry"});
        return i + 1;
      }
      if (item.result && !run(kReleaseSavepoint)) {
        item.result = sqlite_error(db_, "releasing a savepoint");
      }
      if (item.result) {
        any_ok = true;
      } else {
        run(kRollbackToSavepoint);
        run(kReleaseSavepoint);
        if (tx.wrote()) cache_.clear();
      }
    }
    if (any_ok && run(kCommit)) return batch.size();
    if (any_ok) fail_from(first, batch.size(), sqlite_error(db_, "committing").value());
    run(kRollback);
    if (any_ok) cache_.clear();  // it holds writes that were rolled back
    return batch.size();
  }

  // fn's result; an exception it throws is an error, so its writes are undone like any other.
  static Result<void> run_fn(const GroupCommit::Fn& fn, StoreTransaction& tx) {
    try {
      return fn(tx);
    } catch (const std::exception& e) {
      return fail(ErrorCode::kInternal,
                  std::string("sqlite store: transaction threw: ") + e.what());
    }
  }

  // Runs a cached statement that returns no rows; false on error (sqlite3_errmsg says which).
  bool run(Sql which) {
    Statement st(*statements_, which);
    return st.ok() && st.step() == SQLITE_DONE;
  }

  // Clears the cache when another connection committed since this one last looked.
  Result<void> check_cache() {
    Statement st(*statements_, kDataVersion);
    if (!st.ok() || st.step() != SQLITE_ROW) return sqlite_error(db_, "reading data_version");
    const int64_t version = st.integer(0);
    if (version != data_version_) {
      cache_.clear();
      data_version_ = version;
    }
    return ok();
  }

  sqlite3* db_;
  std::unique_ptr<StatementCache> statements_;
  JobCache cache_;
  int64_t data_version_ = -1;
  GroupCommit group_;  // last: its leader may be running a batch on the members above
};

Result<void> set_up(sqlite3* db, const std::string& path, const SqliteStoreOptions& options) {
  sqlite3_busy_timeout(db, static_cast<int>(options.busy_timeout_s * 1000));
  sqlite3_extended_result_codes(db, 0);
  {
    Statement wal(db, "PRAGMA journal_mode = WAL");
    if (!wal.ok() || wal.step() != SQLITE_ROW) return sqlite_error(db, "switching to WAL");
    if (wal.text(0) != "wal") {
      return fail(ErrorCode::kUnavailable, "sqlite store: '" + path +
                                               "' cannot use WAL journaling (mode '" + wal.text(0) +
                                               "'); put it on a local disk");
    }
  }
  ZEUS_TRY(
      sqlite_exec(db, options.durable ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL",
                  "setting synchronous"));
  ZEUS_TRY(sqlite_exec(db, "PRAGMA foreign_keys = ON", "enabling foreign keys"));
  // Checkpoint every ~40 MB of WAL rather than SQLite's 4 MB: each checkpoint flushes the files
  // to disk while it holds the write lock, and at 1,000 pages those stalls doubled the service's
  // p99 latency (bench/server_bench, 8 clients: 6.8 ms -> 3.2 ms).
  ZEUS_TRY(sqlite_exec(db, "PRAGMA wal_autocheckpoint = 10000", "setting the checkpoint interval"));
  ZEUS_TRY(sqlite_exec(db, "BEGIN IMMEDIATE", "locking '" + path + "' to set up the schema"));
  Result<void> r = [&]() -> Result<void> {
    Statement version(db, "PRAGMA user_version");
    if (!version.ok() || version.step() != SQLITE_ROW) return sqlite_error(db, "reading version");
    const int64_t found = version.integer(0);
    if (found > kSqliteStoreSchemaVersion) {
      return fail(ErrorCode::kNotSupported,
                  "sqlite store: '" + path + "' has schema version " + std::to_string(found) +
                      ", newer than this build's " + std::to_string(kSqliteStoreSchemaVersion) +
                      "; use a newer zeus or another file");
    }
    if (found == kSqliteStoreSchemaVersion) return ok();
    if (found == 1) {
      ZEUS_TRY(sqlite_exec(db, kMigrateV1ToV2, "upgrading the schema from version 1 to 2"));
    } else {
      ZEUS_TRY(sqlite_exec(db, kSqliteSchema, "creating the schema"));
    }
    const std::string set_version =
        "PRAGMA user_version = " + std::to_string(kSqliteStoreSchemaVersion);
    return sqlite_exec(db, set_version.c_str(), "recording the schema version");
  }();
  if (!r) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return r;
  }
  return sqlite_exec(db, "COMMIT", "committing the schema");
}

}  // namespace

Result<std::unique_ptr<Store>> open_sqlite_store(const std::string& path,
                                                 const SqliteStoreOptions& options) {
  Result<sqlite3*> opened = store::sqlite_open(path, "sqlite store");
  if (!opened) return fail(opened.error());
  sqlite3* db = *opened;
  Result<void> r = set_up(db, path, options);
  if (!r) {
    sqlite3_close_v2(db);
    return fail(r.error());
  }
  return std::unique_ptr<Store>(std::make_unique<SqliteStore>(db));
}

}  // namespace zeus
