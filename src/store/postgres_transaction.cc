#include "store/postgres_transaction.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "zeus/wire/bso_json.h"

namespace zeus::store {
namespace {

// Statements prepared on every connection (SQL PREPARE, so that EXECUTE can run them inside one
// multi-statement round trip).
constexpr const char* kGetJob = "zeus_get_job";
constexpr const char* kListJobs = "zeus_list_jobs";
constexpr const char* kPutJob = "zeus_put_job";
constexpr const char* kDeleteJob = "zeus_delete_job";
constexpr const char* kGetTrials = "zeus_get_trials";
constexpr const char* kPutTrial = "zeus_put_trial";
constexpr const char* kGetJobWithTrials = "zeus_get_job_with_trials_v2";
constexpr const char* kBumpVersion = "zeus_bump_job_version";
// The advisory-lock namespace of jobs (first key of pg_advisory_xact_lock(int, int)).
constexpr const char* kJobLockSpace = "1702000001";
constexpr const char* kTrialColumns =
    "trial_number, batch_size, kind, pruning_round, status, time_s, energy_j, cost, epochs, "
    "metric, dispatched_unix_s";

// Doubles travel as shortest round-trip text, so a stored value reads back bit for bit.
std::string double_text(double value) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  ZEUS_CHECK(ec == std::errc(), "to_chars of a double cannot overflow 32 characters");
  return std::string(buffer, end);
}

double double_field(const pqxx::field& f) {
  const char* text = f.c_str();
  const std::string_view view(text);
  double value = 0;
  if (view == "Infinity" || view == "-Infinity" || view == "NaN") return f.as<double>();
  std::from_chars(text, text + view.size(), value);
  return value;
}

// A trial from the columns kTrialColumns, starting at column `first` of `row`.
Result<Trial> trial_from_row(const pqxx::row& row, int first, std::string_view job_id) {
  Trial t;
  t.job_id = std::string(job_id);
  t.trial_number = row[first].as<int>();
  t.batch_size = row[first + 1].as<int>();
  const std::string kind = row[first + 2].c_str(), status = row[first + 4].c_str();
  if (!parse_trial_kind(kind, &t.kind) || !parse_trial_status(status, &t.status)) {
    return fail(ErrorCode::kInternal, "postgres store: trial " + std::to_string(t.trial_number) +
                                          " of job '" + t.job_id + "' has kind '" + kind +
                                          "' and status '" + status + "'");
  }
  t.pruning_round = row[first + 3].as<int>();
  t.time_s = double_field(row[first + 5]);
  t.energy_j = double_field(row[first + 6]);
  t.cost = double_field(row[first + 7]);
  t.epochs = row[first + 8].as<int>();
  t.metric = double_field(row[first + 9]);
  t.dispatched_unix_s = double_field(row[first + 10]);
  return t;
}

// A job from its spec_json and rng_state columns, starting at column `first` of `row`.
Result<JobRecord> job_from_row(const pqxx::row& row, std::string_view job_id, int first = 0) {
  Result<JobSpec> spec = job_spec_from_json(row[first].c_str());
  if (!spec) {
    return fail(ErrorCode::kInternal, "postgres store: job '" + std::string(job_id) +
                                          "' has an unreadable spec: " + spec.error().message);
  }
  return JobRecord{std::move(*spec), row[first + 1].c_str()};
}

// Puts t into trials (ordered by trial_number), replacing the one with its number.
void apply_trial(std::vector<Trial>& trials, const Trial& t) {
  auto it = std::lower_bound(trials.begin(), trials.end(), t.trial_number,
                             [](const Trial& a, int n) { return a.trial_number < n; });
  if (it != trials.end() && it->trial_number == t.trial_number) {
    *it = t;
  } else {
    trials.insert(it, t);
  }
}

}  // namespace

void prepare_statements(pqxx::connection& c) {
  const std::string trials = kTrialColumns;
  const std::pair<const char*, std::string> statements[] = {
      {kGetJob, "(text) AS SELECT spec_json, rng_state FROM jobs WHERE job_id = $1"},
      {kListJobs, " AS SELECT job_id FROM jobs ORDER BY job_id"},
      {kPutJob,
       "(text, text, text) AS INSERT INTO jobs (job_id, spec_json, rng_state) "
       "VALUES ($1, $2, $3) ON CONFLICT (job_id) DO UPDATE SET "
       "spec_json = excluded.spec_json, rng_state = excluded.rng_state"},
      {kDeleteJob, "(text) AS DELETE FROM jobs WHERE job_id = $1"},  // trials: ON DELETE CASCADE
      {kGetTrials,
       "(text) AS SELECT " + trials + " FROM trials WHERE job_id = $1 ORDER BY trial_number"},
      // The job's columns on every row; trial columns NULL (one row) for a job without trials.
      // The job's version, then (only when it differs from $2, the version of our copy) its
      // columns and trials on every row: one row with NULL trial columns when the copy is current
      // or the job has no trials.
      {kGetJobWithTrials, "(text, bigint) AS SELECT j.version, j.spec_json, j.rng_state, " +
                              trials +
                              " FROM jobs j LEFT JOIN trials t ON t.job_id = j.job_id "
                              "AND j.version <> $2 WHERE j.job_id = $1 ORDER BY t.trial_number"},
      {kBumpVersion, "(text, bigint) AS UPDATE jobs SET version = $2 WHERE job_id = $1"},
      // Inserts nothing (0 rows) when the job does not exist, instead of failing the transaction
      // on the foreign key.
      {kPutTrial,
       "(text, int, int, text, int, text, float8, float8, float8, int, float8, float8) AS "
       "INSERT INTO trials (job_id, trial_number, batch_size, kind, pruning_round, status, "
       "time_s, energy_j, cost, epochs, metric, dispatched_unix_s) "
       "SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 "
       "WHERE EXISTS (SELECT 1 FROM jobs WHERE job_id = $1) "
       "ON CONFLICT (job_id, trial_number) DO UPDATE SET "
       "batch_size = excluded.batch_size, kind = excluded.kind, "
       "pruning_round = excluded.pruning_round, status = excluded.status, "
       "time_s = excluded.time_s, energy_j = excluded.energy_j, cost = excluded.cost, "
       "epochs = excluded.epochs, metric = excluded.metric, "
       "dispatched_unix_s = excluded.dispatched_unix_s"},
  };
  std::string sql;
  for (const auto& [name, definition] : statements) sql += "PREPARE " + (name + definition) + ";";
  pqxx::nontransaction tx(c);
  tx.exec(sql);
}

std::string database_message(const std::exception& e) {
  std::string out;
  std::string_view rest = e.what();
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
      line.remove_suffix(1);
    }
    if (line.empty()) continue;
    if (!out.empty()) out += "; ";
    out += line;
  }
  return out;
}

bool is_retryable(const std::string& sqlstate) {
  return sqlstate == "40001" || sqlstate == "40P01";
}

PostgresTransaction::~PostgresTransaction() {
  if (!ended_) rollback();
}

template <typename F>
auto PostgresTransaction::guard(const std::string& doing, F&& body) -> decltype(body()) {
  if (database_error_) return fail(*database_error_);  // the transaction is already aborted
  try {
    return body();
  } catch (const pqxx::broken_connection&) {
    return lost_connection(doing);
  } catch (const pqxx::statement_completion_unknown& e) {
    return remember(ErrorCode::kUnavailable, doing, database_message(e));
  } catch (const pqxx::sql_error& e) {
    if (is_retryable(e.sqlstate())) abort_ = Abort::kRetry;
    return remember(is_retryable(e.sqlstate()) ? ErrorCode::kUnavailable : ErrorCode::kInternal,
                    doing, database_message(e));
  } catch (const std::exception& e) {
    return remember(ErrorCode::kInternal, doing, database_message(e));
  }
}

tl::unexpected<Error> PostgresTransaction::remember(ErrorCode code, const std::string& doing,
                                                    const std::string& what) {
  database_error_ = Error{code, "postgres store: " + doing + ": " + what};
  return fail(*database_error_);
}

std::string PostgresTransaction::connection_lost() const {
  return "lost the connection to " + std::string(where_) + " (the server closed it, or stopped)";
}

tl::unexpected<Error> PostgresTransaction::lost_connection(const std::string& doing) {
  abort_ = Abort::kReconnect;
  return remember(ErrorCode::kUnavailable, doing,
                  connection_lost() + "; check that the server runs");
}

pqxx::result PostgresTransaction::send(const std::string& statement) {
  std::string text;
  if (!begun_) text = "BEGIN;";
  text += held_;
  text += statement;
  held_.clear();
  begun_ = true;  // sent: a failure below still leaves a transaction to roll back
  return tx_.exec(text);
}

void PostgresTransaction::hold(const std::string& statement) {
  held_ += statement;
  held_ += ';';
}

void PostgresTransaction::lock_job(std::string_view job_id) {
  if (locked_.count(job_id)) return;
  locked_.emplace(job_id);
  hold(std::string("SELECT pg_advisory_xact_lock(") + kJobLockSpace + ", hashtext(" +
       quote(job_id) + "))");
}

Result<void> PostgresTransaction::commit() {
  if (database_error_) return fail(*database_error_);
  if (!begun_ && held_.empty()) {  // nothing was read or written
    ended_ = true;
    return ok();
  }
  // Every job written gets a new version, so that other stores' copies of it are not used.
  for (const std::string& id : written_) {
    const int64_t version = new_job_version();
    hold(std::string("EXECUTE ") + kBumpVersion + "(" + quote(id) + ", " + std::to_string(version) +
         ")");
    if (auto it = loaded_.find(id); it != loaded_.end()) it->second.version = version;
  }
  if (!begun_) {
    // Write-only: BEGIN and the writes go first, so that a connection found broken now (closed by
    // the server while idle in the pool) broke before COMMIT, and transact runs fn again on a new
    // one, instead of an in-doubt COMMIT. One more round trip, for transactions that read nothing.
    const Result<void> sent = guard("writing", [&]() -> Result<void> {
      send("");
      return ok();
    });
    if (!sent) {
      rollback();
      return fail(*database_error_);
    }
  }
  try {
    send("COMMIT");
    ended_ = true;
    remember_committed();
    return ok();
  } catch (const pqxx::broken_connection&) {
    ended_ = true;
    return fail(ErrorCode::kUnavailable,
                "postgres store: committing: " + connection_lost() +
                    ", so whether the transaction was stored is unknown; check that the server "
                    "runs");
  } catch (const pqxx::sql_error& e) {
    rollback();
    if (is_retryable(e.sqlstate())) abort_ = Abort::kRetry;
    return remember(is_retryable(e.sqlstate()) ? ErrorCode::kUnavailable : ErrorCode::kInternal,
                    "committing", database_message(e));
  } catch (const std::exception& e) {
    rollback();
    return remember(ErrorCode::kInternal, "committing", database_message(e));
  }
}

void PostgresTransaction::remember_committed() {
  if (!cache_) return;
  for (const std::string& id : written_) {
    if (!loaded_.count(id)) cache_->erase(id);
  }
  for (auto& [id, copy] : loaded_) cache_->put(id, std::move(copy));
  loaded_.clear();
}

void PostgresTransaction::rollback() noexcept {
  ended_ = true;
  held_.clear();
  if (!begun_) return;
  begun_ = false;
  try {
    tx_.exec("ROLLBACK");
  } catch (const std::exception&) {
    // A broken connection: the server rolls back on its own; the pool drops the connection.
  }
}

Result<void> PostgresTransaction::ping() {
  return guard("checking the connection", [&]() -> Result<void> {
    tx_.exec("SELECT 1");
    return ok();
  });
}

Result<std::optional<JobRecord>> PostgresTransaction::get_job(std::string_view job_id) {
  return guard(
      "reading job '" + std::string(job_id) + "'", [&]() -> Result<std::optional<JobRecord>> {
        lock_job(job_id);
        const pqxx::result r = send(std::string("EXECUTE ") + kGetJob + "(" + quote(job_id) + ")");
        if (r.empty()) return std::optional<JobRecord>();
        Result<JobRecord> job = job_from_row(r[0], job_id);
        if (!job) return fail(job.error());
        existing_.emplace(job_id);
        return std::optional<JobRecord>(std::move(*job));
      });
}

Result<std::optional<std::pair<JobRecord, std::vector<Trial>>>>
PostgresTransaction::get_job_with_trials(std::string_view job_id) {
  using Loaded = std::optional<std::pair<JobRecord, std::vector<Trial>>>;
  return guard("reading job '" + std::string(job_id) + "' and its trials", [&]() -> Result<Loaded> {
    lock_job(job_id);
    std::optional<CachedJob> copy = cache_ ? cache_->get(job_id) : std::nullopt;
    const int64_t known = copy ? copy->version : -1;
    const pqxx::result r = send(std::string("EXECUTE ") + kGetJobWithTrials + "(" + quote(job_id) +
                                ", " + std::to_string(known) + ")");
    if (r.empty()) {
      if (cache_) cache_->erase(job_id);
      return Loaded();
    }
    CachedJob loaded;
    loaded.version = r[0][0].as<int64_t>();
    if (copy && loaded.version == known) {
      loaded = std::move(*copy);
    } else {
      Result<JobRecord> job = job_from_row(r[0], job_id, 1);
      if (!job) return fail(job.error());
      loaded.record = std::move(*job);
      loaded.trials.reserve(r.size());
      for (const pqxx::row& row : r) {
        if (row[3].is_null()) continue;  // a job without trials
        Result<Trial> t = trial_from_row(row, 3, job_id);
        if (!t) return fail(t.error());
        loaded.trials.push_back(std::move(*t));
      }
    }
    existing_.emplace(job_id);
    Loaded out(std::in_place, loaded.record, loaded.trials);
    loaded_[std::string(job_id)] = std::move(loaded);
    return out;
  });
}

Result<std::vector<std::string>> PostgresTransaction::list_jobs() {
  return guard("listing jobs", [&]() -> Result<std::vector<std::string>> {
    const pqxx::result r = send(std::string("EXECUTE ") + kListJobs);
    std::vector<std::string> ids;
    ids.reserve(r.size());
    for (const pqxx::row& row : r) ids.emplace_back(row[0].c_str());
    return ids;
  });
}

Result<void> PostgresTransaction::put_job(const JobRecord& job) {
  if (!job.spec.job_id) return fail(ErrorCode::kInvalidArgument, "put_job needs a job_id");
  const std::string& id = *job.spec.job_id;
  return guard("writing job '" + id + "'", [&]() -> Result<void> {
    lock_job(id);
    hold(std::string("EXECUTE ") + kPutJob + "(" + quote(id) + ", " +
         quote(job_spec_to_json(job.spec)) + ", " + quote(job.rng_state) + ")");
    existing_.emplace(id);
    written_.emplace(id);
    if (auto it = loaded_.find(id); it != loaded_.end()) it->second.record = job;
    return ok();
  });
}

Result<bool> PostgresTransaction::delete_job(std::string_view job_id) {
  return guard("deleting job '" + std::string(job_id) + "'", [&]() -> Result<bool> {
    lock_job(job_id);
    written_.emplace(job_id);
    if (auto it = loaded_.find(job_id); it != loaded_.end()) loaded_.erase(it);
    const pqxx::result r = send(std::string("EXECUTE ") + kDeleteJob + "(" + quote(job_id) + ")");
    if (auto it = existing_.find(job_id); it != existing_.end()) existing_.erase(it);
    return r.affected_rows() > 0;
  });
}

Result<std::vector<Trial>> PostgresTransaction::get_trials(std::string_view job_id) {
  return guard("reading trials of '" + std::string(job_id) + "'",
               [&]() -> Result<std::vector<Trial>> {
                 lock_job(job_id);
                 const pqxx::result r =
                     send(std::string("EXECUTE ") + kGetTrials + "(" + quote(job_id) + ")");
                 std::vector<Trial> trials;
                 trials.reserve(r.size());
                 for (const pqxx::row& row : r) {
                   Result<Trial> t = trial_from_row(row, 0, job_id);
                   if (!t) return fail(t.error());
                   trials.push_back(std::move(*t));
                 }
                 return trials;
               });
}

Result<void> PostgresTransaction::put_trial(const Trial& t) {
  return guard("writing trial " + std::to_string(t.trial_number) + " of job '" + t.job_id + "'",
               [&]() -> Result<void> {
                 lock_job(t.job_id);
                 const std::string statement =
                     std::string("EXECUTE ") + kPutTrial + "(" + quote(t.job_id) + ", " +
                     std::to_string(t.trial_number) + ", " + std::to_string(t.batch_size) + ", " +
                     quote(trial_kind_name(t.kind)) + ", " + std::to_string(t.pruning_round) +
                     ", " + quote(trial_status_name(t.status)) + ", " +
                     quote(double_text(t.time_s)) + ", " + quote(double_text(t.energy_j)) + ", " +
                     quote(double_text(t.cost)) + ", " + std::to_string(t.epochs) + ", " +
                     quote(double_text(t.metric)) + ", " + quote(double_text(t.dispatched_unix_s)) +
                     ")";
                 written_.emplace(t.job_id);
                 if (auto it = loaded_.find(t.job_id); it != loaded_.end()) {
                   apply_trial(it->second.trials, t);
                 }
                 if (existing_.count(t.job_id)) {  // the job exists and stays (its lock is ours)
                   hold(statement);
                   return ok();
                 }
                 if (send(statement).affected_rows() == 0) {
                   return fail(ErrorCode::kNotFound, "no job '" + t.job_id + "' to add a trial to");
                 }
                 existing_.emplace(t.job_id);
                 return ok();
               });
}

}  // namespace zeus::store
