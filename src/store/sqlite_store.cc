// open_sqlite_store(): the Store over SQLite (zeus/sqlite_store.h). All SQL of the batch-size
// optimizer lives in this file.
#include "zeus/sqlite_store.h"

#include <sqlite3.h>

#include <mutex>

#include "zeus/bso_json.h"

namespace zeus {
namespace {

constexpr const char* kSchema = R"sql(
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

tl::unexpected<Error> sqlite_error(sqlite3* db, const std::string& doing) {
  const int code = sqlite3_errcode(db);
  const ErrorCode ours = (code == SQLITE_BUSY || code == SQLITE_LOCKED || code == SQLITE_CANTOPEN)
                             ? ErrorCode::kUnavailable
                             : ErrorCode::kInternal;
  return fail(ours, "sqlite store: " + doing + ": " + sqlite3_errmsg(db));
}

// A prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) stmt_ = nullptr;
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  void bind(int i, std::string_view text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, int64_t value) { sqlite3_bind_int64(stmt_, i, value); }
  void bind(int i, int value) { sqlite3_bind_int64(stmt_, i, value); }
  void bind(int i, double value) { sqlite3_bind_double(stmt_, i, value); }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(stmt_); }
  std::string text(int col) const {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p)) : std::string();
  }
  int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

Result<void> exec(sqlite3* db, const char* sql, const std::string& doing) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return sqlite_error(db, doing);
  return ok();
}

class SqliteTransaction final : public StoreTransaction {
 public:
  explicit SqliteTransaction(sqlite3* db) : db_(db) {}

  Result<std::optional<JobRecord>> get_job(std::string_view job_id) override {
    Statement st(db_, "SELECT spec_json, rng_state FROM jobs WHERE job_id = ?1");
    if (!st.ok()) return sqlite_error(db_, "preparing get_job");
    st.bind(1, job_id);
    const int rc = st.step();
    if (rc == SQLITE_DONE) return std::optional<JobRecord>();
    if (rc != SQLITE_ROW) return sqlite_error(db_, "reading job '" + std::string(job_id) + "'");
    Result<JobSpec> spec = job_spec_from_json(st.text(0));
    if (!spec) {
      return fail(ErrorCode::kInternal, "sqlite store: job '" + std::string(job_id) +
                                            "' has an unreadable spec: " + spec.error().message);
    }
    return std::optional<JobRecord>(JobRecord{std::move(*spec), st.text(1)});
  }

  Result<std::vector<std::string>> list_jobs() override {
    Statement st(db_, "SELECT job_id FROM jobs ORDER BY job_id");
    if (!st.ok()) return sqlite_error(db_, "preparing list_jobs");
    std::vector<std::string> ids;
    int rc;
    while ((rc = st.step()) == SQLITE_ROW) ids.push_back(st.text(0));
    if (rc != SQLITE_DONE) return sqlite_error(db_, "listing jobs");
    return ids;
  }

  Result<void> put_job(const JobRecord& job) override {
    if (!job.spec.job_id) return fail(ErrorCode::kInvalidArgument, "put_job needs a job_id");
    Statement st(db_,
                 "INSERT INTO jobs (job_id, spec_json, rng_state) VALUES (?1, ?2, ?3) "
                 "ON CONFLICT (job_id) DO UPDATE SET spec_json = excluded.spec_json, "
                 "rng_state = excluded.rng_state");
    if (!st.ok()) return sqlite_error(db_, "preparing put_job");
    st.bind(1, *job.spec.job_id);
    st.bind(2, job_spec_to_json(job.spec));
    st.bind(3, job.rng_state);
    if (st.step() != SQLITE_DONE) return sqlite_error(db_, "writing job '" + *job.spec.job_id + "'");
    return ok();
  }

  Result<bool> delete_job(std::string_view job_id) override {
    Statement trials(db_, "DELETE FROM trials WHERE job_id = ?1");
    Statement jobs(db_, "DELETE FROM jobs WHERE job_id = ?1");
    if (!trials.ok() || !jobs.ok()) return sqlite_error(db_, "preparing delete_job");
    trials.bind(1, job_id);
    jobs.bind(1, job_id);
    if (trials.step() != SQLITE_DONE || jobs.step() != SQLITE_DONE) {
      return sqlite_error(db_, "deleting job '" + std::string(job_id) + "'");
    }
    return sqlite3_changes(db_) > 0;
  }

  Result<std::vector<Trial>> get_trials(std::string_view job_id) override {
    Statement st(db_,
                 "SELECT trial_number, batch_size, kind, pruning_round, status, time_s, "
                 "energy_j, cost, epochs, metric, dispatched_unix_s FROM trials WHERE job_id = ?1 "
                 "ORDER BY trial_number");
    if (!st.ok()) return sqlite_error(db_, "preparing get_trials");
    st.bind(1, job_id);
    std::vector<Trial> trials;
    int rc;
    while ((rc = st.step()) == SQLITE_ROW) {
      Trial t;
      t.job_id = std::string(job_id);
      t.trial_number = static_cast<int>(st.integer(0));
      t.batch_size = static_cast<int>(st.integer(1));
      const std::string kind = st.text(2), status = st.text(4);
      if (!parse_trial_kind(kind, &t.kind) || !parse_trial_status(status, &t.status)) {
        return fail(ErrorCode::kInternal, "sqlite store: trial " + std::to_string(t.trial_number) +
                                              " of job '" + t.job_id + "' has kind '" + kind +
                                              "' and status '" + status + "'");
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
    if (rc != SQLITE_DONE) return sqlite_error(db_, "reading trials of '" + std::string(job_id) + "'");
    return trials;
  }

  Result<void> put_trial(const Trial& t) override {
    Statement exists(db_, "SELECT 1 FROM jobs WHERE job_id = ?1");
    if (!exists.ok()) return sqlite_error(db_, "preparing put_trial");
    exists.bind(1, t.job_id);
    const int found = exists.step();
    if (found == SQLITE_DONE) {
      return fail(ErrorCode::kNotFound, "no job '" + t.job_id + "' to add a trial to");
    }
    if (found != SQLITE_ROW) return sqlite_error(db_, "looking up job '" + t.job_id + "'");
    Statement st(db_,
                 "INSERT INTO trials (job_id, trial_number, batch_size, kind, pruning_round, "
                 "status, time_s, energy_j, cost, epochs, metric, dispatched_unix_s) "
                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
                 "ON CONFLICT (job_id, trial_number) DO UPDATE SET "
                 "batch_size = excluded.batch_size, kind = excluded.kind, "
                 "pruning_round = excluded.pruning_round, status = excluded.status, "
                 "time_s = excluded.time_s, energy_j = excluded.energy_j, cost = excluded.cost, "
                 "epochs = excluded.epochs, metric = excluded.metric, "
                 "dispatched_unix_s = excluded.dispatched_unix_s");
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
      return sqlite_error(db_, "writing trial " + std::to_string(t.trial_number) + " of job '" +
                                   t.job_id + "'");
    }
    return ok();
  }

 private:
  sqlite3* db_;
};

class SqliteStore final : public Store {
 public:
  explicit SqliteStore(sqlite3* db) : db_(db) {}
  ~SqliteStore() override { sqlite3_close_v2(db_); }

  Result<void> transact(const std::function<Result<void>(StoreTransaction&)>& fn) override {
    std::lock_guard<std::mutex> lock(mu_);
    ZEUS_TRY(exec(db_, "BEGIN IMMEDIATE", "starting a transaction (another process may hold "
                                          "the database longer than busy_timeout_s)"));
    SqliteTransaction tx(db_);
    Result<void> result = fn(tx);
    if (result) {
      if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK) return ok();
      result = sqlite_error(db_, "committing");
    }
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return result;
  }

 private:
  std::mutex mu_;
  sqlite3* db_;
};

Result<void> set_up(sqlite3* db, const std::string& path, const SqliteStoreOptions& options) {
  sqlite3_busy_timeout(db, static_cast<int>(options.busy_timeout_s * 1000));
  sqlite3_extended_result_codes(db, 0);
  {
    Statement wal(db, "PRAGMA journal_mode = WAL");
    if (!wal.ok() || wal.step() != SQLITE_ROW) return sqlite_error(db, "switching to WAL");
    if (wal.text(0) != "wal") {
      return fail(ErrorCode::kUnavailable, "sqlite store: '" + path +
                                               "' cannot use WAL journaling (mode '" +
                                               wal.text(0) + "'); put it on a local disk");
    }
  }
  ZEUS_TRY(exec(db, options.durable ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL",
                "setting synchronous"));
  ZEUS_TRY(exec(db, "PRAGMA foreign_keys = ON", "enabling foreign keys"));
  ZEUS_TRY(exec(db, "BEGIN IMMEDIATE", "locking '" + path + "' to set up the schema"));
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
      ZEUS_TRY(exec(db, kMigrateV1ToV2, "upgrading the schema from version 1 to 2"));
    } else {
      ZEUS_TRY(exec(db, kSchema, "creating the schema"));
    }
    const std::string set_version =
        "PRAGMA user_version = " + std::to_string(kSqliteStoreSchemaVersion);
    return exec(db, set_version.c_str(), "recording the schema version");
  }();
  if (!r) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return r;
  }
  return exec(db, "COMMIT", "committing the schema");
}

}  // namespace

Result<std::unique_ptr<Store>> open_sqlite_store(const std::string& path,
                                                 const SqliteStoreOptions& options) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                                 nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close_v2(db);
    return fail(ErrorCode::kUnavailable, "sqlite store: cannot open '" + path + "': " + message +
                                             "; check that the folder exists and is writable");
  }
  Result<void> r = set_up(db, path, options);
  if (!r) {
    sqlite3_close_v2(db);
    return fail(r.error());
  }
  return std::unique_ptr<Store>(std::make_unique<SqliteStore>(db));
}

}  // namespace zeus
