// open_postgres_store(): the Store over PostgreSQL with libpqxx 6 (zeus/store/postgres_store.h):
// the
// schema, the connection pool, and transactions with their retries. SQL for PostgreSQL lives
// here and in postgres_transaction.cc.
#include "zeus/store/postgres_store.h"

#include <charconv>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <pqxx/pqxx>
#include <random>
#include <regex>
#include <thread>
#include <vector>

#include "store/postgres_transaction.h"
#include "zeus/common/log.h"
#include "zeus/common/redact_url.h"
#include "zeus/wire/bso_json.h"

namespace zeus {
namespace {

using store::Abort;
using store::PostgresTransaction;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS zeus_schema (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  job_id     TEXT PRIMARY KEY,
  spec_json  TEXT NOT NULL,
  rng_state  TEXT NOT NULL,
  version    BIGINT NOT NULL DEFAULT 0
);
-- Schema 2 (version: a new random value at every write of the job; copies are checked by it).
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS version BIGINT NOT NULL DEFAULT 0;
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

// The error of a connection that cannot be opened, the same at open and later.
tl::unexpected<Error> cannot_connect(const std::string& url, const std::exception& e) {
  return fail(ErrorCode::kUnavailable,
              "postgres store: cannot connect to " + redact_url(url) + ": " +
                  store::database_message(e) + "; check that the server runs and the URL is right");
}

// Opens one connection: search_path, prepared statements.
std::unique_ptr<pqxx::connection> connect(const std::string& url, const std::string& schema) {
  auto c = std::make_unique<pqxx::connection>(url);
  if (!schema.empty()) {
    pqxx::nontransaction tx(*c);
    tx.exec("SET search_path TO " + tx.quote_name(schema));
  }
  store::prepare_statements(*c);
  return c;
}

class PostgresStore final : public Store {
 public:
  PostgresStore(std::string url, PostgresStoreOptions options)
      : url_(std::move(url)),
        where_(redact_url(url_)),
        options_(std::move(options)),
        random_(std::random_device{}()) {}

  // Keeps an open connection (used for the schema set-up) in the pool.
  void adopt(std::unique_ptr<pqxx::connection> c) {
    std::lock_guard<std::mutex> lock(mu_);
    ++open_;
    idle_.push_back(std::move(c));
  }

  // Each transaction runs on its own pooled connection, in parallel with the others: requests for
  // different jobs never wait for each other, and PostgreSQL flushes the WAL of commits that
  // arrive together once. (Running the waiting requests in one transaction instead — a group
  // commit, as SqliteStore does — was measured slower: 495 against 890 pairs/s at 8 clients.)
  Result<void> transact(const std::function<Result<void>(StoreTransaction&)>& fn) override {
    return transact_alone([&fn](PostgresTransaction& tx) { return fn(tx); });
  }

  // With the same connections and retries as transact, so a server that went away gives the
  // same "cannot connect to …" as any request.
  Result<void> ping() override {
    return transact_alone([](PostgresTransaction& tx) { return tx.ping(); });
  }

 private:
  using Work = std::function<Result<void>(PostgresTransaction&)>;

  static Result<void> run_fn(const Work& fn, PostgresTransaction& tx) {
    try {
      return fn(tx);
    } catch (const std::exception& e) {
      return fail(ErrorCode::kInternal,
                  std::string("postgres store: transaction threw: ") + store::database_message(e));
    }
  }

  // Runs fn until it commits, or fails in a way that running it again cannot mend. After a
  // connection was found broken the next attempt opens a new one rather than take another idle
  // one, which the server closed too when it went away or restarted: a server that is down is
  // then reported as "cannot connect to …" (never as the broken connection's libpq message), and
  // one that is back serves the request.
  Result<void> transact_alone(const Work& fn) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(options_.retry_timeout_s);
    int reconnects = 0;
    bool fresh = false;  // the last attempt's connection broke
    for (int attempt = 1;; ++attempt) {
      Result<std::unique_ptr<pqxx::connection>> lease = acquire(fresh);
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
      fresh = abort == Abort::kReconnect;
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

  // One attempt: fn, then COMMIT. *abort says whether fn may run again.
  Result<void> run_once(pqxx::connection& c, const Work& fn, Abort* abort) {
    PostgresTransaction ptx(c, where_, &cache_);
    Result<void> result = run_fn(fn, ptx);
    *abort = ptx.abort();
    if (ptx.database_error() && (result || *abort != Abort::kNone)) {
      result = fail(*ptx.database_error());
    }
    if (!result) {
      ptx.rollback();
      return result;
    }
    result = ptx.commit();
    *abort = ptx.abort();
    return result;
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

  // An idle connection, or a new one while the pool has room; `fresh`: always a new one (in the
  // place of an idle one when the pool is full).
  Result<std::unique_ptr<pqxx::connection>> acquire(bool fresh) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !idle_.empty() || open_ < options_.pool_size; });
    std::unique_ptr<pqxx::connection> replaced;
    if (!idle_.empty() && (!fresh || open_ >= options_.pool_size)) {
      std::unique_ptr<pqxx::connection> c = std::move(idle_.back());
      idle_.pop_back();
      if (!fresh) return c;
      replaced = std::move(c);  // its place in the pool goes to the new connection
    } else {
      ++open_;
    }
    lock.unlock();
    replaced.reset();
    try {
      return connect(url_, options_.schema);
    } catch (const std::exception& e) {
      lock.lock();
      --open_;
      cv_.notify_one();
      return cannot_connect(url_, e);
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
  const std::string where_;  // url_ without its password, for messages
  const PostgresStoreOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_;
  int open_ = 0;  // connections idle or leased
  std::mt19937_64 random_;
  store::PostgresJobCache cache_;  // jobs read or written, current while their version is
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
    return fail(ErrorCode::kNotSupported, "postgres store: " + redact_url(url) +
                                              " has schema version " + std::to_string(found) +
                                              ", newer than this build's " +
                                              std::to_string(kPostgresStoreSchemaVersion) +
                                              "; use a newer zeus or another database");
  } else if (found < kPostgresStoreSchemaVersion) {  // upgraded in place by kSchema above
    tx.exec("UPDATE zeus_schema SET version = " + std::to_string(kPostgresStoreSchemaVersion));
  }
  tx.commit();
  return ok();
}

}  // namespace

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
    return cannot_connect(url, e);
  } catch (const std::exception& e) {
    return fail(ErrorCode::kInternal, "postgres store: setting up the schema in " +
                                          redact_url(url) + ": " +
                                          store::database_message(e));
  }
  auto store = std::make_unique<PostgresStore>(url, options);
  store->adopt(std::move(c));
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace zeus
