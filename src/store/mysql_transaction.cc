// MysqlTransaction (store/mysql_transaction.h): the SQL of the MySQL store's reads and writes.
#include "store/mysql_transaction.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "zeus/store/mysql_store.h"
#include "zeus/wire/bso_json.h"

namespace zeus::store {
// Named, not anonymous: files of a folder share a unity batch (see CMakeLists.txt).
namespace mysql_sql {

using C = MysqlColumn;
const std::vector<MysqlColumn> kTrialColumnKinds = {C::kInt,  C::kInt,    C::kText,   C::kInt,
                                                    C::kText, C::kDouble, C::kDouble, C::kDouble,
                                                    C::kInt,  C::kDouble, C::kDouble};

// Locks the job's row and reads it (a lock taken again is a no-op).
const MysqlStatement kLockJob{
    "SELECT version, spec_json, rng_state FROM jobs WHERE job_id = ? FOR UPDATE",
    {C::kInt, C::kText, C::kText}};
const MysqlStatement kListJobs{"SELECT job_id FROM jobs ORDER BY job_id", {C::kText}};
const MysqlStatement kGetTrials{
    "SELECT trial_number, batch_size, kind, pruning_round, status, time_s, energy_j, cost, "
    "epochs, metric, dispatched_unix_s FROM trials WHERE job_id = ? ORDER BY trial_number",
    kTrialColumnKinds};
// A plain INSERT: when another transaction created the job meanwhile, a duplicate key (a
// conflict, run again) rather than overwriting a job this one did not see.
const MysqlStatement kInsertJob{
    "INSERT INTO jobs (job_id, spec_json, rng_state, version) VALUES (?, ?, ?, ?)", {}};
const MysqlStatement kUpdateJob{
    "UPDATE jobs SET spec_json = ?, rng_state = ?, version = ? WHERE job_id = ?", {}};
const MysqlStatement kBumpVersion{"UPDATE jobs SET version = ? WHERE job_id = ?", {}};
const MysqlStatement kDeleteJob{"DELETE FROM jobs WHERE job_id = ?", {}};  // trials: CASCADE
const MysqlStatement kPutTrial{
    "INSERT INTO trials (job_id, trial_number, batch_size, kind, pruning_round, status, time_s, "
    "energy_j, cost, epochs, metric, dispatched_unix_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
    "?) ON DUPLICATE KEY UPDATE batch_size = VALUES(batch_size), kind = VALUES(kind), "
    "pruning_round = VALUES(pruning_round), status = VALUES(status), time_s = VALUES(time_s), "
    "energy_j = VALUES(energy_j), cost = VALUES(cost), epochs = VALUES(epochs), "
    "metric = VALUES(metric), dispatched_unix_s = VALUES(dispatched_unix_s)",
    {}};

constexpr unsigned kDuplicateKey = 1062;  // ER_DUP_ENTRY

Result<Trial> trial_from_row(const MysqlRow& row, std::string_view job_id) {
  Trial t;
  t.job_id = std::string(job_id);
  t.trial_number = static_cast<int>(row[0].integer);
  t.batch_size = static_cast<int>(row[1].integer);
  if (!parse_trial_kind(row[2].text, &t.kind) || !parse_trial_status(row[4].text, &t.status)) {
    return fail(ErrorCode::kInternal, "mysql store: trial " + std::to_string(t.trial_number) +
                                          " of job '" + t.job_id + "' has kind '" + row[2].text +
                                          "' and status '" + row[4].text + "'");
  }
  t.pruning_round = static_cast<int>(row[3].integer);
  t.time_s = row[5].real;
  t.energy_j = row[6].real;
  t.cost = row[7].real;
  t.epochs = static_cast<int>(row[8].integer);
  t.metric = row[9].real;
  t.dispatched_unix_s = row[10].real;
  return t;
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

}  // namespace mysql_sql

MysqlTransaction::~MysqlTransaction() {
  if (!ended_) rollback();
}

tl::unexpected<Error> MysqlTransaction::remember(ErrorCode code, const std::string& doing,
                                                 const std::string& what) {
  database_error_ = Error{code, "mysql store: " + doing + ": " + what};
  return fail(*database_error_);
}

std::string MysqlTransaction::connection_lost() const {
  return "lost the connection to " + std::string(where_) + " (the server closed it, or stopped)";
}

tl::unexpected<Error> MysqlTransaction::failed(const std::string& doing, const MysqlError& e) {
  if (e.connection_lost() || c_.broken()) {
    abort_ = MysqlAbort::kReconnect;
    return remember(ErrorCode::kUnavailable, doing,
                    connection_lost() + ": " + e.to_string() + "; check that the server runs");
  }
  if (e.retryable()) {
    abort_ = MysqlAbort::kRetry;
    return remember(ErrorCode::kUnavailable, doing, e.to_string());
  }
  return remember(ErrorCode::kInternal, doing, e.to_string());
}

Result<MysqlOutcome> MysqlTransaction::exec(const std::string& doing,
                                            const MysqlStatement& statement,
                                            std::initializer_list<MysqlParam> params) {
  if (database_error_) return fail(*database_error_);  // the transaction is already aborted
  begun_ = true;
  MysqlResult<MysqlOutcome> r = c_.run(statement, params);
  if (!r) return failed(doing, r.error());
  return std::move(*r);
}

Result<std::optional<MysqlTransaction::LockedRow>> MysqlTransaction::lock_job(
    std::string_view job_id, const std::string& doing) {
  Result<MysqlOutcome> r = exec(doing, mysql_sql::kLockJob, {job_id});
  if (!r) return fail(r.error());
  exists_[std::string(job_id)] = !r->rows.empty();
  if (r->rows.empty()) return std::optional<LockedRow>();
  MysqlRow& row = r->rows[0];
  return std::optional<LockedRow>(
      LockedRow{row[0].integer, std::move(row[1].text), std::move(row[2].text)});
}

Result<JobRecord> MysqlTransaction::record_of(std::string_view job_id, const LockedRow& row) {
  Result<JobSpec> spec = job_spec_from_json(row.spec_json);
  if (!spec) {
    return fail(ErrorCode::kInternal, "mysql store: job '" + std::string(job_id) +
                                          "' has an unreadable spec: " + spec.error().message);
  }
  return JobRecord{std::move(*spec), row.rng_state};
}

Result<std::vector<Trial>> MysqlTransaction::read_trials(std::string_view job_id,
                                                         const std::string& doing) {
  Result<MysqlOutcome> r = exec(doing, mysql_sql::kGetTrials, {job_id});
  if (!r) return fail(r.error());
  std::vector<Trial> trials;
  trials.reserve(r->rows.size());
  for (const MysqlRow& row : r->rows) {
    Result<Trial> t = mysql_sql::trial_from_row(row, job_id);
    if (!t) return fail(t.error());
    trials.push_back(std::move(*t));
  }
  return trials;
}

Result<std::optional<JobRecord>> MysqlTransaction::get_job(std::string_view job_id) {
  Result<std::optional<LockedRow>> row =
      lock_job(job_id, "reading job '" + std::string(job_id) + "'");
  if (!row) return fail(row.error());
  if (!*row) return std::optional<JobRecord>();
  Result<JobRecord> job = record_of(job_id, **row);
  if (!job) return fail(job.error());
  return std::optional<JobRecord>(std::move(*job));
}

Result<std::optional<std::pair<JobRecord, std::vector<Trial>>>>
MysqlTransaction::get_job_with_trials(std::string_view job_id) {
  using Loaded = std::optional<std::pair<JobRecord, std::vector<Trial>>>;
  if (database_error_) return fail(*database_error_);
  // Read before in this transaction (so locked), with its writes since: no round trip.
  if (auto it = loaded_.find(job_id); it != loaded_.end()) {
    return Loaded(std::in_place, it->second.record, it->second.trials);
  }
  const std::string doing = "reading job '" + std::string(job_id) + "' and its trials";
  Result<std::optional<LockedRow>> row = lock_job(job_id, doing);
  if (!row) return fail(row.error());
  if (!*row) {
    if (cache_) cache_->erase(job_id);
    return Loaded();
  }
  std::optional<CachedJob> copy =
      cache_ && !written_.count(job_id) ? cache_->get(job_id) : std::nullopt;
  CachedJob loaded;
  if (copy && copy->version == (*row)->version) {
    loaded = std::move(*copy);
  } else {
    Result<JobRecord> job = record_of(job_id, **row);
    if (!job) return fail(job.error());
    Result<std::vector<Trial>> trials = read_trials(job_id, doing);
    if (!trials) return fail(trials.error());
    loaded = CachedJob{(*row)->version, std::move(*job), std::move(*trials)};
  }
  Loaded out(std::in_place, loaded.record, loaded.trials);
  loaded_[std::string(job_id)] = std::move(loaded);
  return out;
}

Result<std::vector<std::string>> MysqlTransaction::list_jobs() {
  Result<MysqlOutcome> r = exec("listing jobs", mysql_sql::kListJobs, {});
  if (!r) return fail(r.error());
  std::vector<std::string> ids;
  ids.reserve(r->rows.size());
  for (MysqlRow& row : r->rows) ids.push_back(std::move(row[0].text));
  return ids;
}

Result<std::vector<Trial>> MysqlTransaction::get_trials(std::string_view job_id) {
  const std::string doing = "reading trials of '" + std::string(job_id) + "'";
  Result<std::optional<LockedRow>> row = lock_job(job_id, doing);
  if (!row) return fail(row.error());
  if (!*row) return std::vector<Trial>();
  return read_trials(job_id, doing);
}

Result<void> MysqlTransaction::put_job(const JobRecord& job) {
  if (!job.spec.job_id) return fail(ErrorCode::kInvalidArgument, "put_job needs a job_id");
  const std::string& id = *job.spec.job_id;
  if (id.size() > kMysqlStoreMaxJobIdBytes) {
    return fail(ErrorCode::kInvalidArgument,
                "job_id is " + std::to_string(id.size()) + " bytes; the MySQL store keeps ids of " +
                    "up to " + std::to_string(kMysqlStoreMaxJobIdBytes) + " bytes");
  }
  const std::string doing = "writing job '" + id + "'";
  auto known = exists_.find(id);
  if (known == exists_.end()) {
    Result<std::optional<LockedRow>> row = lock_job(id, doing);
    if (!row) return fail(row.error());
    known = exists_.find(id);
  }
  const std::string spec_json = job_spec_to_json(job.spec);
  const int64_t version = new_job_version();
  if (known->second) {
    Result<MysqlOutcome> r =
        exec(doing, mysql_sql::kUpdateJob, {spec_json, job.rng_state, version, id});
    if (!r) return fail(r.error());
  } else {
    if (database_error_) return fail(*database_error_);
    begun_ = true;
    MysqlResult<MysqlOutcome> r =
        c_.run(mysql_sql::kInsertJob, {id, spec_json, job.rng_state, version});
    if (!r && r.error().number == mysql_sql::kDuplicateKey) {
      abort_ = MysqlAbort::kRetry;  // created by another transaction since our lock-and-read
      return remember(ErrorCode::kUnavailable, doing,
                      "another transaction created it meanwhile (" + r.error().to_string() + ")");
    }
    if (!r) return failed(doing, r.error());
    known->second = true;
  }
  written_.insert(id);
  versioned_.insert(id);
  if (auto it = loaded_.find(id); it != loaded_.end()) {
    it->second.record = job;
    it->second.version = version;
  }
  return ok();
}

Result<bool> MysqlTransaction::delete_job(std::string_view job_id) {
  // The DELETE locks the job's row itself (its trials go by ON DELETE CASCADE).
  const std::string doing = "deleting job '" + std::string(job_id) + "'";
  Result<MysqlOutcome> r = exec(doing, mysql_sql::kDeleteJob, {job_id});
  if (!r) return fail(r.error());
  exists_[std::string(job_id)] = false;
  written_.emplace(job_id);
  if (auto it = versioned_.find(job_id); it != versioned_.end()) versioned_.erase(it);
  if (auto it = loaded_.find(job_id); it != loaded_.end()) loaded_.erase(it);
  return r->affected_rows > 0;
}

Result<void> MysqlTransaction::put_trial(const Trial& t) {
  for (double v : {t.time_s, t.energy_j, t.cost, t.metric, t.dispatched_unix_s}) {
    if (!std::isfinite(v)) {
      return fail(ErrorCode::kInvalidArgument,
                  "trial " + std::to_string(t.trial_number) + " of job '" + t.job_id +
                      "' has a value that is not finite; MySQL and MariaDB store finite numbers "
                      "only");
    }
  }
  const std::string doing =
      "writing trial " + std::to_string(t.trial_number) + " of job '" + t.job_id + "'";
  auto known = exists_.find(t.job_id);
  if (known == exists_.end()) {
    Result<std::optional<LockedRow>> row = lock_job(t.job_id, doing);
    if (!row) return fail(row.error());
    known = exists_.find(t.job_id);
  }
  if (!known->second) {
    return fail(ErrorCode::kNotFound, "no job '" + t.job_id + "' to add a trial to");
  }
  Result<MysqlOutcome> r = exec(doing, mysql_sql::kPutTrial,
                                {t.job_id, t.trial_number, t.batch_size, trial_kind_name(t.kind),
                                 t.pruning_round, trial_status_name(t.status), t.time_s, t.energy_j,
                                 t.cost, t.epochs, t.metric, t.dispatched_unix_s});
  if (!r) return fail(r.error());
  written_.insert(t.job_id);
  if (auto it = loaded_.find(t.job_id); it != loaded_.end()) {
    mysql_sql::apply_trial(it->second.trials, t);
  }
  return ok();
}

Result<void> MysqlTransaction::ping() {
  MysqlResult<void> r = c_.ping();
  if (r) return ok();
  return failed("checking the connection", r.error());
}

Result<void> MysqlTransaction::commit() {
  if (database_error_) return fail(*database_error_);
  if (!begun_) {  // nothing was read or written
    ended_ = true;
    return ok();
  }
  // Every job written gets a new version, so that other stores' copies of it are not used (a
  // put_job gave its job one already).
  for (const std::string& id : written_) {
    if (versioned_.count(id) || !exists_[id]) continue;
    const int64_t version = new_job_version();
    Result<MysqlOutcome> r =
        exec("writing job '" + id + "'", mysql_sql::kBumpVersion, {version, id});
    if (!r) {
      rollback();
      return fail(r.error());
    }
    if (auto it = loaded_.find(id); it != loaded_.end()) it->second.version = version;
  }
  MysqlResult<void> r = c_.commit();
  if (r) {
    ended_ = true;
    remember_committed();
    return ok();
  }
  if (r.error().connection_lost() || c_.broken()) {
    ended_ = true;
    return fail(ErrorCode::kUnavailable,
                "mysql store: committing: " + connection_lost() +
                    ", so whether the transaction was stored is unknown; check that the server "
                    "runs");
  }
  rollback();
  if (r.error().retryable()) abort_ = MysqlAbort::kRetry;
  return remember(r.error().retryable() ? ErrorCode::kUnavailable : ErrorCode::kInternal,
                  "committing", r.error().to_string());
}

void MysqlTransaction::remember_committed() {
  if (!cache_) return;
  for (const std::string& id : written_) {
    if (!loaded_.count(id)) cache_->erase(id);
  }
  for (auto& [id, copy] : loaded_) cache_->put(id, std::move(copy));
  loaded_.clear();
}

void MysqlTransaction::rollback() noexcept {
  ended_ = true;
  if (!begun_) return;
  begun_ = false;
  if (!c_.broken()) (void)c_.rollback();  // a broken connection: the server rolls back alone
}

}  // namespace zeus::store
