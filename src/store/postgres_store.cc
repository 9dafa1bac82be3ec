// open_postgres_store(): the Store over PostgreSQL with libpqxx 6 (zeus/postgres_store.h). All
// SQL for PostgreSQL lives in this file.
#include "zeus/postgres_store.h"

#include <charconv>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <pqxx/pqxx>
#include <random>
#include <regex>
#include <thread>
#include <vector>

#include "zeus/bso_json.h"
#include "zeus/log.h"

namespace zeus {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS zeus_schema (version INTEGER NOT NULL);
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
  time_s        DOUBLE PRECISION NOT NULL,
  energy_j      DOUBLE PRECISION NOT NULL,
  cost          DOUBLE PRECISION NOT NULL,
  epochs        INTEGER NOT NULL,
  metric        DOUBLE PRECISION NOT NULL,
  dispatched_unix_s DOUBLE PRECISION NOT NULL DEFAULT 0,
  PRIMARY KEY (job_id, trial_number)
);
)sql";

// Prepared statements, registered on every connection.
constexpr const char* kGetJob = "zeus_get_job";
constexpr const char* kListJobs = "zeus_list_jobs";
constexpr const char* kPutJob = "zeus_put_job";
constexpr const char* kDeleteJob = "zeus_delete_job";
constexpr const char* kGetTrials = "zeus_get_trials";
constexpr const char* kPutTrial = "zeus_put_trial";

void prepare_statements(pqxx::connection& c) {
  c.prepare(kGetJob, "SELECT spec_json, rng_state FROM jobs WHERE job_id = $1");
  c.prepare(kListJobs, "SELECT job_id FROM jobs ORDER BY job_id");
  c.prepare(kPutJob,
            "INSERT INTO jobs (job_id, spec_json, rng_state) VALUES ($1, $2, $3) "
            "ON CONFLICT (job_id) DO UPDATE SET spec_json = excluded.spec_json, "
            "rng_state = excluded.rng_state");
  c.prepare(kDeleteJob, "DELETE FROM jobs WHERE job_id = $1");  // trials: ON DELETE CASCADE
  c.prepare(kGetTrials,
            "SELECT trial_number, batch_size, kind, pruning_round, status, time_s, energy_j, "
            "cost, epochs, metric, dispatched_unix_s FROM trials WHERE job_id = $1 ORDER BY "
            "trial_number");
  // Inserts nothing (0 rows) when the job does not exist, instead of failing the transaction
  // on the foreign key.
  c.prepare(kPutTrial,
            "INSERT INTO trials (job_id, trial_number, batch_size, kind, pruning_round, status, "
            "time_s, energy_j, cost, epochs, metric, dispatched_unix_s) "
            "SELECT $1, $2, $3, $4, $5, $6, $7::float8, $8::float8, $9::float8, $10, $11::float8, "
            "$12::float8 "
            "WHERE EXISTS (SELECT 1 FROM jobs WHERE job_id = $1) "
            "ON CONFLICT (job_id, trial_number) DO UPDATE SET "
            "batch_size = excluded.batch_size, kind = excluded.kind, "
            "pruning_round = excluded.pruning_round, status = excluded.status, "
            "time_s = excluded.time_s, energy_j = excluded.energy_j, cost = excluded.cost, "
            "epochs = excluded.epochs, metric = excluded.metric, "
            "dispatched_unix_s = excluded.dispatched_unix_s");
}

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

bool is_retryable(const std::string& sqlstate) {
  return sqlstate == "40001" || sqlstate == "40P01";
}

// Why a transaction attempt ended without committing.
enum class Abort { kNone, kRetry, kReconnect };

class PostgresTransaction final : public StoreTransaction {
 public:
  explicit PostgresTransaction(pqxx::transaction_base& tx) : tx_(tx) {}

  Result<std::optional<JobRecord>> get_job(std::string_view job_id) override {
    return guard("reading job '" + std::string(job_id) + "'",
                 [&]() -> Result<std::optional<JobRecord>> {
                   const pqxx::result r = tx_.exec_prepared(kGetJob, std::string(job_id));
                   if (r.empty()) return std::optional<JobRecord>();
                   Result<JobSpec> spec = job_spec_from_json(r[0][0].c_str());
                   if (!spec) {
                     return fail(ErrorCode::kInternal,
                                 "postgres store: job '" + std::string(job_id) +
                                     "' has an unreadable spec: " + spec.error().message);
                   }
                   return std::optional<JobRecord>(JobRecord{std::move(*spec), r[0][1].c_str()});
                 });
  }

  Result<std::vector<std::string>> list_jobs() override {
    return guard("listing jobs", [&]() -> Result<std::vector<std::string>> {
      const pqxx::result r = tx_.exec_prepared(kListJobs);
      std::vector<std::string> ids;
      ids.reserve(r.size());
      for (const pqxx::row& row : r) ids.emplace_back(row[0].c_str());
      return ids;
    });
  }

  Result<void> put_job(const JobRecord& job) override {
    if (!job.spec.job_id) return fail(ErrorCode::kInvalidArgument, "put_job needs a job_id");
    return guard("writing job '" + *job.spec.job_id + "'", [&]() -> Result<void> {
      tx_.exec_prepared(kPutJob, *job.spec.job_id, job_spec_to_json(job.spec), job.rng_state);
      return ok();
    });
  }

  Result<bool> delete_job(std::string_view job_id) override {
    return guard("deleting job '" + std::string(job_id) + "'", [&]() -> Result<bool> {
      return tx_.exec_prepared(kDeleteJob, std::string(job_id)).affected_rows() > 0;
    });
  }

  Result<std::vector<Trial>> get_trials(std::string_view job_id) override {
    return guard(
        "reading trials of '" + std::string(job_id) + "'", [&]() -> Result<std::vector<Trial>> {
          const pqxx::result r = tx_.exec_prepared(kGetTrials, std::string(job_id));
          std::vector<Trial> trials;
          trials.reserve(r.size());
          for (const pqxx::row& row : r) {
            Trial t;
            t.job_id = std::string(job_id);
            t.trial_number = row[0].as<int>();
            t.batch_size = row[1].as<int>();
            const std::string kind = row[2].c_str(), status = row[4].c_str();
            if (!parse_trial_kind(kind, &t.kind) || !parse_trial_status(status, &t.status)) {
              return fail(ErrorCode::kInternal,
                          "postgres store: trial " + std::to_string(t.trial_number) + " of job '" +
                              t.job_id + "' has kind '" + kind + "' and status '" + status + "'");
            }
            t.pruning_round = row[3].as<int>();
            t.time_s = double_field(row[5]);
            t.energy_j = double_field(row[6]);
            t.cost = double_field(row[7]);
            t.epochs = row[8].as<int>();
            t.metric = double_field(row[9]);
            t.dispatched_unix_s = double_field(row[10]);
            trials.push_back(std::move(t));
          }
          return trials;
        });
  }

  Result<void> put_trial(const Trial& t) override {
    return guard(
        "writing trial " + std::to_string(t.trial_number) + " of job '" + t.job_id + "'",
        [&]() -> Result<void> {
          const pqxx::result r =
              tx_.exec_prepared(kPutTrial, t.job_id, t.trial_number, t.batch_size,
                                std::string(trial_kind_name(t.kind)), t.pruning_round,
                                std::string(trial_status_name(t.status)), double_text(t.time_s),
                                double_text(t.energy_j), double_text(t.cost), t.epochs,
                                double_text(t.metric), double_text(t.dispatched_unix_s));
          if (r.affected_rows() == 0) {
            return fail(ErrorCode::kNotFound, "no job '" + t.job_id + "' to add a trial to");
          }
          return ok();
        });
  }

  // Set when a statement failed in a way that transact handles by running fn again.
  Abort abort() const { return abort_; }
  // The first database error of this transaction, if any (fn may have swallowed it).
  const std::optional<Error>& database_error() const { return database_error_; }

 private:
  // Runs one statement; turns libpqxx's exceptions into errors and remembers them.
  template <typename F>
  auto guard(const std::string& doing, F&& body) -> decltype(body()) {
    if (database_error_) return fail(*database_error_);  // the transaction is already aborted
    try {
      return body();
    } catch (const pqxx::broken_connection& e) {
      abort_ = Abort::kReconnect;
      return remember(ErrorCode::kUnavailable, doing, e.what());
    } catch (const pqxx::statement_completion_unknown& e) {
      return remember(ErrorCode::kUnavailable, doing, e.what());
    } catch (const pqxx::transaction_rollback& e) {  // serialization failure, deadlock
      abort_ = Abort::kRetry;
      return remember(ErrorCode::kUnavailable, doing, e.what());
    } catch (const pqxx::sql_error& e) {
      if (is_retryable(e.sqlstate())) abort_ = Abort::kRetry;
      return remember(is_retryable(e.sqlstate()) ? ErrorCode::kUnavailable : ErrorCode::kInternal,
                      doing, e.what());
    } catch (const std::exception& e) {
      return remember(ErrorCode::kInternal, doing, e.what());
    }
  }

  tl::unexpected<Error> remember(ErrorCode code, const std::string& doing, const char* what) {
    database_error_ = Error{code, "postgres store: " + doing + ": " + what};
    return fail(*database_error_);
  }

  pqxx::transaction_base& tx_;
  Abort abort_ = Abort::kNone;
  std::optional<Error> database_error_;
};

// Opens one connection: search_path, prepared statements.
std::unique_ptr<pqxx::connection> connect(const std::string& url, const std::string& schema) {
  auto c = std::make_unique<pqxx::connection>(url);
  if (!schema.empty()) {
    pqxx::nontransaction tx(*c);
    tx.exec("SET search_path TO " + tx.quote_name(schema));
  }
  prepare_statements(*c);
  return c;
}

class PostgresStore final : public Store {
 public:
  PostgresStore(std::string url, PostgresStoreOptions options)
      : url_(std::move(url)), options_(std::move(options)), random_(std::random_device{}()) {}

  // Keeps an open connection (used for the schema set-up) in the pool.
  void adopt(std::unique_ptr<pqxx::connection> c) {
    std::lock_guard<std::mutex> lock(mu_);
    ++open_;
    idle_.push_back(std::move(c));
  }

  Result<void> transact(const std::function<Result<void>(StoreTransaction&)>& fn) override {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(options_.retry_timeout_s);
    int reconnects = 0;
    for (int attempt = 1;; ++attempt) {
      Result<std::unique_ptr<pqxx::connection>> lease = acquire();
      if (!lease) return fail(lease.error());
      std::unique_ptr<pqxx::connection> c = std::move(*lease);
      Abort abort = Abort::kNone;
      Result<void> result = run_once(*c, fn, &abort);
      if (abort == Abort::kReconnect || !c->is_open()) {
        discard(std::move(c));
      } else {
        release(std::move(c));
      }
      if (abort == Abort::kNone) return result;
      if (abort == Abort::kReconnect && ++reconnects > 2) return result;
      if (std::chrono::steady_clock::now() >= deadline) {
        return fail(ErrorCode::kUnavailable,
                    "postgres store: gave up after " + std::to_string(attempt) +
                        " attempts in retry_timeout_s = " +
                        std::to_string(options_.retry_timeout_s) + " s: " + result.error().message);
      }
      back_off(attempt);
    }
  }

 private:
  // One attempt: BEGIN, fn, COMMIT. *abort says whether fn may run again.
  Result<void> run_once(pqxx::connection& c,
                        const std::function<Result<void>(StoreTransaction&)>& fn, Abort* abort) {
    try {
      pqxx::transaction<pqxx::serializable> tx(c);
      PostgresTransaction ptx(tx);
      Result<void> result = fn(ptx);
      *abort = ptx.abort();
      if (ptx.database_error() && (result || *abort != Abort::kNone)) {
        result = fail(*ptx.database_error());
      }
      if (!result) {
        tx.abort();
        return result;
      }
      tx.commit();
      return ok();
    } catch (const pqxx::in_doubt_error& e) {
      *abort = Abort::kNone;
      return fail(ErrorCode::kUnavailable,
                  std::string("postgres store: the connection broke during COMMIT, so whether "
                              "the transaction was stored is unknown: ") +
                      e.what());
    } catch (const pqxx::broken_connection& e) {
      *abort = Abort::kReconnect;
      return fail(ErrorCode::kUnavailable,
                  std::string("postgres store: connection lost: ") + e.what());
    } catch (const pqxx::statement_completion_unknown& e) {
      *abort = Abort::kNone;
      return fail(ErrorCode::kUnavailable, std::string("postgres store: ") + e.what());
    } catch (const pqxx::transaction_rollback& e) {  // serialization failure, deadlock
      *abort = Abort::kRetry;
      return fail(ErrorCode::kUnavailable, std::string("postgres store: committing: ") + e.what());
    } catch (const pqxx::sql_error& e) {
      *abort = is_retryable(e.sqlstate()) ? Abort::kRetry : Abort::kNone;
      return fail(*abort == Abort::kRetry ? ErrorCode::kUnavailable : ErrorCode::kInternal,
                  std::string("postgres store: committing: ") + e.what());
    } catch (const std::exception& e) {
      *abort = Abort::kNone;
      return fail(ErrorCode::kInternal, std::string("postgres store: ") + e.what());
    }
  }

  // A random sleep that grows with the attempt (1 ms .. 64 ms), so conflicting clients spread.
  void back_off(int attempt) {
    double limit_s = 0.001 * (1 << std::min(attempt, 6));
    double sleep_s;
    {
      std::lock_guard<std::mutex> lock(mu_);
      sleep_s = std::uniform_real_distribution<double>(0.0, limit_s)(random_);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(sleep_s));
  }

  Result<std::unique_ptr<pqxx::connection>> acquire() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !idle_.empty() || open_ < options_.pool_size; });
    if (!idle_.empty()) {
      std::unique_ptr<pqxx::connection> c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
    ++open_;
    lock.unlock();
    try {
      return connect(url_, options_.schema);
    } catch (const std::exception& e) {
      lock.lock();
      --open_;
      cv_.notify_one();
      return fail(ErrorCode::kUnavailable, "postgres store: cannot connect to " +
                                               redact_database_url(url_) + ": " + e.what());
    }
  }

  void release(std::unique_ptr<pqxx::connection> c) {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(std::move(c));
    cv_.notify_one();
  }

  void discard(std::unique_ptr<pqxx::connection> c) {
    c.reset();
    std::lock_guard<std::mutex> lock(mu_);
    --open_;
    cv_.notify_one();
  }

  const std::string url_;
  const PostgresStoreOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_;
  int open_ = 0;  // connections idle or leased
  std::mt19937_64 random_;
};

// Creates the schema and tables under an advisory lock (replicas may start together) and checks
// the version.
Result<void> set_up(pqxx::connection& c, const std::string& url, const std::string& schema) {
  pqxx::work tx(c);
  tx.exec("SELECT pg_advisory_xact_lock(hashtext('zeus_store_schema'))");
  if (!schema.empty()) {
    tx.exec("CREATE SCHEMA IF NOT EXISTS " + tx.quote_name(schema));
    tx.exec("SET LOCAL search_path TO " + tx.quote_name(schema));
  }
  tx.exec(kSchema);
  const pqxx::result version = tx.exec("SELECT max(version) FROM zeus_schema");
  if (version[0][0].is_null()) {
    tx.exec("INSERT INTO zeus_schema (version) VALUES (" +
            std::to_string(kPostgresStoreSchemaVersion) + ")");
  } else if (const int found = version[0][0].as<int>(); found > kPostgresStoreSchemaVersion) {
    return fail(ErrorCode::kNotSupported, "postgres store: " + redact_database_url(url) +
                                              " has schema version " + std::to_string(found) +
                                              ", newer than this build's " +
                                              std::to_string(kPostgresStoreSchemaVersion) +
                                              "; use a newer zeus or another database");
  }
  tx.commit();
  return ok();
}

}  // namespace

std::string redact_database_url(const std::string& url) {
  static const std::regex uri_password(R"(^([a-z]+://[^:/@]*):[^@/]*@)");
  static const std::regex keyword_password(R"((^|\s)password\s*=\s*('[^']*'|\S+))");
  std::string out = std::regex_replace(url, uri_password, "$1:***@");
  return std::regex_replace(out, keyword_password, "$1password=***");
}

Result<std::unique_ptr<Store>> open_postgres_store(const std::string& url,
                                                   const PostgresStoreOptions& options) {
  if (options.pool_size < 1) {
    return fail(ErrorCode::kInvalidArgument, "postgres store: pool_size must be >= 1");
  }
  if (!std::regex_match(options.schema, std::regex("([a-z_][a-z0-9_]*)?"))) {
    return fail(ErrorCode::kInvalidArgument,
                "postgres store: schema '" + options.schema + "' must match [a-z_][a-z0-9_]*");
  }
  std::unique_ptr<pqxx::connection> c;
  try {
    c = std::make_unique<pqxx::connection>(url);
    ZEUS_TRY(set_up(*c, url, options.schema));
    c.reset();
    c = connect(url, options.schema);
  } catch (const pqxx::broken_connection& e) {
    return fail(ErrorCode::kUnavailable, "postgres store: cannot connect to " +
                                             redact_database_url(url) + ": " + e.what() +
                                             "; check that the server runs and the URL is right");
  } catch (const std::exception& e) {
    return fail(ErrorCode::kInternal, "postgres store: setting up the schema in " +
                                          redact_database_url(url) + ": " + e.what());
  }
  auto store = std::make_unique<PostgresStore>(url, options);
  store->adopt(std::move(c));
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace zeus
