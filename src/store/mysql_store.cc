// open_mysql_store(): the Store over MySQL/MariaDB (zeus/store/mysql_store.h): the tables, the
// connection pool, and transactions with their retries. SQL for MySQL lives here and in
// mysql_transaction.cc.
#include "zeus/store/mysql_store.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "store/mysql_connection.h"
#include "store/mysql_transaction.h"
#include "store/mysql_url.h"
#include "store/postgres_job_cache.h"

namespace zeus {
// Named, not anonymous: files of a folder share a unity batch (see CMakeLists.txt).
namespace mysql_store_impl {

using store::MysqlAbort;
using store::MysqlColumn;
using store::MysqlConnection;
using store::MysqlError;
using store::MysqlStatement;
using store::MysqlTransaction;
using store::MysqlUrl;

// The tables (constant SQL, no data in it). job_id is binary: compared byte for byte, with no
// case folding or trailing-space padding (a MySQL collation's), as in SQLite and PostgreSQL.
constexpr const char* kTables[] = {
    "CREATE TABLE IF NOT EXISTS zeus_schema (version INT NOT NULL) ENGINE=InnoDB",
    "CREATE TABLE IF NOT EXISTS jobs ("
    "  job_id VARBINARY(1024) NOT NULL PRIMARY KEY,"
    "  spec_json LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,"
    "  rng_state MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,"
    "  version BIGINT NOT NULL DEFAULT 0"
    ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
    "CREATE TABLE IF NOT EXISTS trials ("
    "  job_id VARBINARY(1024) NOT NULL,"
    "  trial_number INT NOT NULL,"
    "  batch_size INT NOT NULL,"
    "  kind VARCHAR(32) CHARACTER SET ascii NOT NULL,"
    "  pruning_round INT NOT NULL,"
    "  status VARCHAR(32) CHARACTER SET ascii NOT NULL,"
    "  time_s DOUBLE NOT NULL,"
    "  energy_j DOUBLE NOT NULL,"
    "  cost DOUBLE NOT NULL,"
    "  epochs INT NOT NULL,"
    "  metric DOUBLE NOT NULL,"
    "  dispatched_unix_s DOUBLE NOT NULL DEFAULT 0,"
    "  PRIMARY KEY (job_id, trial_number),"
    "  CONSTRAINT zeus_trials_job FOREIGN KEY (job_id) REFERENCES jobs (job_id) ON DELETE CASCADE"
    ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
};
// A named lock per database (replicas starting together create the tables one at a time).
const MysqlStatement kSchemaLock{"SELECT GET_LOCK(CONCAT('zeus_store_schema.', DATABASE()), 60)",
                                 {MysqlColumn::kInt}};
const MysqlStatement kSchemaUnlock{"SELECT RELEASE_LOCK(CONCAT('zeus_store_schema.', DATABASE()))",
                                   {MysqlColumn::kInt}};
const MysqlStatement kEngines{
    "SELECT table_name, engine FROM information_schema.tables WHERE table_schema = DATABASE() "
    "AND table_name IN ('zeus_schema', 'jobs', 'trials')",
    {MysqlColumn::kText, MysqlColumn::kText}};
const MysqlStatement kSchemaVersion{"SELECT MAX(version) FROM zeus_schema", {MysqlColumn::kInt}};
const MysqlStatement kInsertSchemaVersion{"INSERT INTO zeus_schema (version) VALUES (?)", {}};

constexpr unsigned kUnknownDatabase = 1049;  // ER_BAD_DB_ERROR

// The error of a connection that cannot be opened, the same at open and later.
tl::unexpected<Error> cannot_connect(const MysqlUrl& url, const MysqlError& e) {
  std::string hint;
  if (e.number == kUnknownDatabase) {
    hint = "; create it first (CREATE DATABASE " + url.database + " CHARACTER SET utf8mb4)";
  }
  return fail(ErrorCode::kUnavailable, "mysql store: cannot connect to " + url.shown + ": " +
                                           e.to_string() + hint +
                                           "; check that the server runs and the URL is right");
}

// innodb_lock_wait_timeout for the sessions: the retry budget, in whole seconds (1 at least).
unsigned lock_wait_timeout_s(double retry_timeout_s) {
  return static_cast<unsigned>(std::clamp(std::ceil(retry_timeout_s), 1.0, 3600.0));
}

class MysqlStore final : public Store {
 public:
  MysqlStore(MysqlUrl url, MysqlStoreOptions options)
      : url_(std::move(url)), options_(options), random_(std::random_device{}()) {}

  // Keeps an open connection (used for the set-up) in the pool.
  void adopt(std::unique_ptr<MysqlConnection> c) {
    std::lock_guard<std::mutex> lock(mu_);
    ++open_;
    idle_.push_back(std::move(c));
  }

  Result<void> transact(const std::function<Result<void>(StoreTransaction&)>& fn) override {
    return transact_alone([&fn](MysqlTransaction& tx) { return fn(tx); });
  }

  // With the same connections and retries as transact, so a server that went away gives the
  // same "cannot connect to …" as any request.
  Result<void> ping() override {
    return transact_alone([](MysqlTransaction& tx) { return tx.ping(); });
  }

 private:
  using Work = std::function<Result<void>(MysqlTransaction&)>;

  static Result<void> run_fn(const Work& fn, MysqlTransaction& tx) {
    try {
      return fn(tx);
    } catch (const std::exception& e) {
      return fail(ErrorCode::kInternal, std::string("mysql store: transaction threw: ") + e.what());
    }
  }

  // Runs fn until it commits, or fails in a way that running it again cannot mend. After a
  // connection was found broken the next attempt opens a new one rather than take another idle
  // one, which the server closed too when it went away or restarted: a server that is down is
  // then reported as "cannot connect to …", and one that is back serves the request.
  Result<void> transact_alone(const Work& fn) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(options_.retry_timeout_s);
    int reconnects = 0;
    bool fresh = false;  // the last attempt's connection broke
    for (int attempt = 1;; ++attempt) {
      Result<std::unique_ptr<MysqlConnection>> lease = acquire(fresh);
      if (!lease) return fail(lease.error());
      std::unique_ptr<MysqlConnection> c = std::move(*lease);
      MysqlAbort abort = MysqlAbort::kNone;
      Result<void> result = run_once(*c, fn, &abort);
      if (abort == MysqlAbort::kReconnect || c->broken()) {
        discard(std::move(c));
      } else {
        release(std::move(c));
      }
      if (abort == MysqlAbort::kNone) return result;
      fresh = abort == MysqlAbort::kReconnect;
      if (abort == MysqlAbort::kReconnect && ++reconnects > 2) return result;
      if (std::chrono::steady_clock::now() >= deadline) {
        return fail(ErrorCode::kUnavailable,
                    "mysql store: gave up after " + std::to_string(attempt) +
                        " attempts in retry_timeout_s = " +
                        std::to_string(options_.retry_timeout_s) + " s: " + result.error().message);
      }
      back_off(attempt);
    }
  }

  // One attempt: fn, then COMMIT. *abort says whether fn may run again.
  Result<void> run_once(MysqlConnection& c, const Work& fn, MysqlAbort* abort) {
    MysqlTransaction tx(c, url_.shown, &cache_);
    Result<void> result = run_fn(fn, tx);
    *abort = tx.abort();
    if (tx.database_error() && (result || *abort != MysqlAbort::kNone)) {
      result = fail(*tx.database_error());
    }
    if (!result) {
      tx.rollback();
      return result;
    }
    result = tx.commit();
    *abort = tx.abort();
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
  Result<std::unique_ptr<MysqlConnection>> acquire(bool fresh) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !idle_.empty() || open_ < options_.pool_size; });
    std::unique_ptr<MysqlConnection> replaced;
    if (!idle_.empty() && (!fresh || open_ >= options_.pool_size)) {
      std::unique_ptr<MysqlConnection> c = std::move(idle_.back());
      idle_.pop_back();
      if (!fresh) return c;
      replaced = std::move(c);  // its place in the pool goes to the new connection
    } else {
      ++open_;
    }
    lock.unlock();
    replaced.reset();
    store::MysqlResult<std::unique_ptr<MysqlConnection>> c =
        MysqlConnection::open(url_, lock_wait_timeout_s(options_.retry_timeout_s));
    if (!c) {
      lock.lock();
      --open_;
      cv_.notify_one();
      return cannot_connect(url_, c.error());
    }
    return std::move(*c);
  }

  void release(std::unique_ptr<MysqlConnection> c) {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(std::move(c));
    cv_.notify_one();
  }

  void discard(std::unique_ptr<MysqlConnection> c) {
    c.reset();
    std::lock_guard<std::mutex> lock(mu_);
    --open_;
    cv_.notify_one();
  }

  const MysqlUrl url_;  // url_.shown: without its password, for messages
  const MysqlStoreOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<MysqlConnection>> idle_;
  int open_ = 0;  // connections idle or leased
  std::mt19937_64 random_;
  store::PostgresJobCache cache_;  // jobs read or written, current while their version is
};

// Checks the engine of the tables there are, creates the missing ones under a named lock, and
// checks the schema version.
Result<void> set_up(MysqlConnection& c, const MysqlUrl& url) {
  auto failed = [&](const std::string& doing, const MysqlError& e) -> tl::unexpected<Error> {
    if (e.connection_lost()) return cannot_connect(url, e);
    std::string hint;
    if (e.number == 1142 || e.number == 1044) {  // ER_TABLEACCESS_DENIED_ERROR, ER_DBACCESS_DENIED
      hint =
          "; grant the user CREATE, ALTER, INDEX, REFERENCES, SELECT, INSERT, UPDATE and DELETE "
          "on the database";
    }
    return fail(ErrorCode::kInternal,
                "mysql store: " + doing + " in " + url.shown + ": " + e.to_string() + hint);
  };
  store::MysqlResult<store::MysqlOutcome> locked = c.run(kSchemaLock, {});
  if (!locked) return failed("locking the schema", locked.error());
  if (locked->rows.empty() || locked->rows[0][0].null || locked->rows[0][0].integer != 1) {
    return fail(ErrorCode::kUnavailable,
                "mysql store: " + url.shown +
                    ": another client held the schema lock for 60 s; is a zeus serve stuck "
                    "starting?");
  }
  Result<void> result = [&]() -> Result<void> {
    // Tables that exist already first: one without transactions is refused before new tables
    // refer to it (new ones are InnoDB: NO_ENGINE_SUBSTITUTION makes that certain).
    store::MysqlResult<store::MysqlOutcome> engines = c.run(kEngines, {});
    if (!engines) return failed("reading the tables' engines", engines.error());
    for (const store::MysqlRow& row : engines->rows) {
      if (row[1].text != "InnoDB") {
        return fail(ErrorCode::kNotSupported,
                    "mysql store: table " + row[0].text + " in " + url.shown + " uses engine " +
                        (row[1].null ? std::string("(none)") : row[1].text) +
                        ", which has no transactions; the store needs InnoDB (ALTER TABLE " +
                        row[0].text + " ENGINE=InnoDB, or use another database)");
      }
    }
    for (const char* sql : kTables) {
      if (auto r = c.execute(sql); !r) return failed("creating the tables", r.error());
    }
    store::MysqlResult<store::MysqlOutcome> version = c.run(kSchemaVersion, {});
    if (!version) return failed("reading the schema version", version.error());
    const store::MysqlCell& found = version->rows.at(0).at(0);
    if (found.null) {
      if (auto r = c.run(kInsertSchemaVersion, {kMysqlStoreSchemaVersion}); !r) {
        return failed("writing the schema version", r.error());
      }
    } else if (found.integer > kMysqlStoreSchemaVersion) {
      return fail(ErrorCode::kNotSupported, "mysql store: " + url.shown + " has schema version " +
                                                std::to_string(found.integer) +
                                                ", newer than this build's " +
                                                std::to_string(kMysqlStoreSchemaVersion) +
                                                "; use a newer zeus or another database");
    }
    if (auto r = c.commit(); !r) return failed("committing the schema", r.error());
    return ok();
  }();
  if (!result) (void)c.rollback();
  (void)c.run(kSchemaUnlock, {});
  (void)c.commit();  // the connection goes to the pool with no transaction open
  return result;
}

}  // namespace mysql_store_impl

Result<std::unique_ptr<Store>> open_mysql_store(const std::string& url,
                                                const MysqlStoreOptions& options) {
  using namespace mysql_store_impl;
  if (options.pool_size < 1) {
    return fail(ErrorCode::kInvalidArgument, "mysql store: pool_size must be >= 1");
  }
  Result<MysqlUrl> parsed = store::parse_mysql_url(url);
  if (!parsed) return fail(parsed.error());
  store::MysqlResult<std::unique_ptr<MysqlConnection>> c =
      MysqlConnection::open(*parsed, lock_wait_timeout_s(options.retry_timeout_s));
  if (!c) return cannot_connect(*parsed, c.error());
  ZEUS_TRY(set_up(**c, *parsed));
  auto store = std::make_unique<MysqlStore>(std::move(*parsed), options);
  store->adopt(std::move(*c));
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace zeus
