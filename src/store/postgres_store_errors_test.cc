// PostgresStore's failure paths: a statement failing mid round trip, connections the server
// closed (while in use, while idle, write-only), the schema version, bad options, unreachable
// servers and libpq's messages. Runs on the test cluster (test_postgres.h), one schema per test.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "store/postgres_store_fixture.h"
#include "store/postgres_transaction.h"
#include "zeus/common/redact_url.h"
#include "zeus/store/postgres_store.h"

namespace zeus {
namespace {

using testing_pg::dispatched;
using testing_pg::PostgresStoreTest;
using testing_pg::spec;

// A statement that fails in the middle of a round trip (here the server refuses a job id that is
// not UTF-8, with held-back writes before it) fails the transaction even when fn swallows the
// error; nothing of it is stored and the connection goes back to the pool usable (pool of 1).
TEST_F(PostgresStoreTest, AFailedStatementRollsBackAndLeavesTheConnectionClean) {
  std::unique_ptr<Store> store = open(1);
  ASSERT_NE(store, nullptr);
  JobRecord job{*validate_job_spec(spec("k1")), "state"};
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) { return tx.put_job(job); }));
  for (bool swallow : {false, true}) {
    Result<void> r = store->transact([&](StoreTransaction& tx) -> Result<void> {
      Result<std::optional<JobRecord>> j = tx.get_job("k1");
      if (!j) return fail(j.error());
      ZEUS_TRY(tx.put_trial(dispatched("k1", 1)));  // held back
      Result<std::optional<JobRecord>> bad = tx.get_job("k\xff");
      EXPECT_FALSE(bad.has_value());
      if (!bad && !swallow) return fail(bad.error());
      EXPECT_FALSE(tx.put_trial(dispatched("k1", 2)).has_value());  // the transaction is aborted
      return ok();
    });
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, ErrorCode::kInternal) << r.error().to_string();
    ASSERT_TRUE(store->transact([&](StoreTransaction& tx) -> Result<void> {
      Result<std::vector<Trial>> ts = tx.get_trials("k1");
      if (!ts) return fail(ts.error());
      EXPECT_TRUE(ts->empty());
      return ok();
    }));
  }
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) -> Result<void> {
    Result<std::optional<JobRecord>> j = tx.get_job("k1");
    if (!j) return fail(j.error());
    return tx.put_trial(dispatched("k1", 1));
  }));
}

TEST_F(PostgresStoreTest, RefusesANewerSchema) {
  ASSERT_NE(open(), nullptr);
  testing_pg::exec("UPDATE " + schema_ + ".zeus_schema SET version = 99");
  PostgresStoreOptions options;
  options.schema = schema_;
  Result<std::unique_ptr<Store>> s = open_postgres_store(url_, options);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kNotSupported);
  EXPECT_NE(s.error().message.find("schema version 99"), std::string::npos) << s.error().message;
}

// A version-1 database (jobs without the version column) is upgraded in place and keeps its jobs.
TEST_F(PostgresStoreTest, UpgradesASchemaVersion1DatabaseInPlace) {
  testing_pg::exec("CREATE SCHEMA " + schema_ + "; CREATE TABLE " + schema_ +
                   ".zeus_schema (version INTEGER NOT NULL); INSERT INTO " + schema_ +
                   ".zeus_schema VALUES (1); CREATE TABLE " + schema_ +
                   ".jobs (job_id TEXT PRIMARY KEY, spec_json TEXT NOT NULL, rng_state TEXT NOT "
                   "NULL)");
  std::unique_ptr<Store> first = open();
  ASSERT_NE(first, nullptr);
  JobRecord job{*validate_job_spec(spec("k1")), "state"};
  ASSERT_TRUE(first->transact([&](StoreTransaction& tx) { return tx.put_job(job); }));
  first.reset();
  std::unique_ptr<Store> again = open();
  ASSERT_NE(again, nullptr);
  ASSERT_TRUE(again->transact([&](StoreTransaction& tx) -> Result<void> {
    auto loaded = tx.get_job_with_trials("k1");
    if (!loaded) return fail(loaded.error());
    EXPECT_TRUE(loaded->has_value());
    return ok();
  }));
}

// A server-side kill of the store's connection between transactions costs nothing: the next
// transaction runs on a new connection.
TEST_F(PostgresStoreTest, ReplacesAConnectionTheServerClosed) {
  const std::string app = schema_ + "_app";
  std::unique_ptr<Store> store = open(1, url_ + "?application_name=" + app);
  ASSERT_NE(store, nullptr);
  JobRecord job{*validate_job_spec(spec("k1")), "state"};
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) { return tx.put_job(job); }));
  testing_pg::exec(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '" + app +
      "'");
  Result<void> r =
      store->transact([&](StoreTransaction& tx) { return tx.put_trial(dispatched("k1", 1)); });
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) -> Result<void> {
    EXPECT_EQ(tx.get_trials("k1")->size(), 1u);
    return ok();
  }));
}

// The server closes the pooled connection while two writers wait for it: their rollback must not
// let libpqxx reconnect the connection silently (a new session without the PREPAREd statements
// and the search_path) and put it back in the pool, where every later EXECUTE would fail.
TEST_F(PostgresStoreTest, AClosedPooledConnectionLeavesNoUnpreparedConnection) {
  const std::string app = schema_ + "_app";
  std::unique_ptr<Store> store = open(1, url_ + "?application_name=" + app);
  ASSERT_NE(store, nullptr);
  JobRecord job{*validate_job_spec(spec("k1")), "state"};
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) { return tx.put_job(job); }));
  std::atomic<int> queued{0};
  std::vector<std::thread> writers;
  // Holds the only connection and touches no table; while it runs, two writers queue up for the
  // connection, and the server closes it.
  Result<void> first = store->transact([&](StoreTransaction&) -> Result<void> {
    for (int n = 1; n <= 2; ++n) {
      writers.emplace_back([&, n] {
        ++queued;
        Result<void> r = store->transact([&](StoreTransaction& tx) -> Result<void> {
          Result<std::optional<JobRecord>> j = tx.get_job("k1");
          if (!j) return fail(j.error());
          return tx.put_trial(dispatched("k1", n));
        });
        EXPECT_TRUE(r.has_value()) << r.error().to_string();
      });
    }
    while (queued < 2) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    testing_pg::exec(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '" + app +
        "'");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    return ok();
  });
  ASSERT_TRUE(first.has_value()) << first.error().to_string();
  for (std::thread& t : writers) t.join();
  for (int k = 0; k < 3; ++k) {  // and the pool serves later transactions
    Result<void> r = store->transact([&](StoreTransaction& tx) -> Result<void> {
      Result<std::vector<Trial>> t = tx.get_trials("k1");
      if (!t) return fail(t.error());
      EXPECT_EQ(t->size(), 2u);
      return ok();
    });
    EXPECT_TRUE(r.has_value()) << r.error().to_string();
  }
}

// The same for a transaction that only writes: nothing reached the server before the connection
// was found closed, so it runs again on a new one (not an in-doubt COMMIT).
TEST_F(PostgresStoreTest, AWriteOnlyTransactionReplacesAConnectionTheServerClosed) {
  const std::string app = schema_ + "_app";
  std::unique_ptr<Store> store = open(1, url_ + "?application_name=" + app);
  ASSERT_NE(store, nullptr);
  JobRecord job{*validate_job_spec(spec("k1")), "state"};
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) { return tx.put_job(job); }));
  testing_pg::exec(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '" + app +
      "'");
  job.rng_state = "state 2";
  Result<void> r = store->transact([&](StoreTransaction& tx) { return tx.put_job(job); });
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) -> Result<void> {
    EXPECT_EQ(tx.get_job("k1")->value().rng_state, "state 2");
    return ok();
  }));
}

// A database of its own, which the test can close to new connections (ALLOW_CONNECTIONS false)
// and whose connections it can end: to the store, its server has gone away, while the other
// tests go on using the cluster.
class PostgresStoreGoneTest : public PostgresStoreTest {
 protected:
  void SetUp() override {
    PostgresStoreTest::SetUp();
    database_ = schema_;
    testing_pg::exec("CREATE DATABASE " + database_);
    db_url_ = url_.substr(0, url_.rfind('/') + 1) + database_;
  }
  void TearDown() override {
    testing_pg::exec("DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
    PostgresStoreTest::TearDown();
  }
  // The server goes away: no new connection, and the open ones end.
  void go_away() {
    testing_pg::exec("ALTER DATABASE " + database_ + " ALLOW_CONNECTIONS false");
    testing_pg::exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" +
                     database_ + "'");
  }
  void come_back() { testing_pg::exec("ALTER DATABASE " + database_ + " ALLOW_CONNECTIONS true"); }

  // The one clear message of a server that cannot be reached: where, and the fix; never an empty
  // job name or libpqxx's wording.
  void expect_cannot_connect(const Result<void>& r, const std::string& doing) {
    ASSERT_FALSE(r.has_value()) << doing;
    EXPECT_EQ(r.error().code, ErrorCode::kUnavailable) << doing;
    const std::string& m = r.error().message;
    EXPECT_NE(m.find("cannot connect to " + db_url_ + ": "), std::string::npos)
        << doing << ": " << m;
    EXPECT_NE(m.find("check that the server runs"), std::string::npos) << doing << ": " << m;
    EXPECT_EQ(m.find("''"), std::string::npos) << doing << ": " << m;
    EXPECT_EQ(m.find("client encoding"), std::string::npos) << doing << ": " << m;
  }

  std::string database_;
  std::string db_url_;
};

// The pool holds connections the server closed when it went away. A health check
// (ping), a request that reads and one that only writes each get "cannot connect to <URL>…",
// however many closed connections the pool still holds; once the server is back, they succeed.
TEST_F(PostgresStoreGoneTest, AServerThatWentAwayIsCannotConnectOnEveryPath) {
  PostgresStoreOptions options;
  options.pool_size = 4;
  Result<std::unique_ptr<Store>> opened = open_postgres_store(db_url_, options);
  ASSERT_TRUE(opened.has_value()) << opened.error().to_string();
  Store& store = **opened;
  JobRecord job{*validate_job_spec(spec("k1")), "state"};
  ASSERT_TRUE(store.transact([&](StoreTransaction& tx) { return tx.put_job(job); }));
  // Four transactions at once: the pool opens all four connections.
  std::atomic<int> inside{0};
  std::vector<std::thread> users;
  for (int i = 0; i < 4; ++i) {
    users.emplace_back([&] {
      Result<void> r = store.transact([&](StoreTransaction& tx) -> Result<void> {
        ++inside;
        while (inside < 4) std::this_thread::yield();
        return tx.get_job("k1").has_value() ? ok() : fail(ErrorCode::kInternal, "read failed");
      });
      EXPECT_TRUE(r.has_value()) << r.error().to_string();
    });
  }
  for (std::thread& t : users) t.join();

  go_away();
  for (int round = 0; round < 3; ++round) {  // more attempts than the pool has connections
    expect_cannot_connect(store.ping(), "ping");
    expect_cannot_connect(store.transact([&](StoreTransaction& tx) -> Result<void> {
      Result<std::optional<JobRecord>> j = tx.get_job("k1");
      return j ? ok() : fail(j.error());
    }),
                          "a read");
    expect_cannot_connect(store.transact([&](StoreTransaction& tx) { return tx.put_job(job); }),
                          "a write-only transaction");
  }
  come_back();
  Result<void> back = store.ping();
  EXPECT_TRUE(back.has_value()) << back.error().to_string();
  back = store.transact([&](StoreTransaction& tx) { return tx.put_trial(dispatched("k1", 1)); });
  EXPECT_TRUE(back.has_value()) << back.error().to_string();
}

// The server goes away in the middle of a request (between its read and its write): the
// request gets the same message.
TEST_F(PostgresStoreGoneTest, AServerThatGoesAwayMidRequestIsCannotConnect) {
  Result<std::unique_ptr<Store>> opened = open_postgres_store(db_url_, {});
  ASSERT_TRUE(opened.has_value()) << opened.error().to_string();
  JobRecord job{*validate_job_spec(spec("k1")), "state"};
  ASSERT_TRUE((*opened)->transact([&](StoreTransaction& tx) { return tx.put_job(job); }));
  bool gone = false;
  Result<void> r = (*opened)->transact([&](StoreTransaction& tx) -> Result<void> {
    Result<std::optional<JobRecord>> j = tx.get_job("k1");
    if (!j) return fail(j.error());
    if (!gone) go_away();
    gone = true;
    Result<std::vector<Trial>> t = tx.get_trials("k1");
    return t ? ok() : fail(t.error());
  });
  expect_cannot_connect(r, "a request");
}

// A transaction on a connection found closed names the server and the fix, in our words
// ("reading job 'k1': lost the connection to <URL>…"), where libpqxx says "Could not obtain
// client encoding: not connected" — also on a connection libpq already knows closed.
TEST_F(PostgresStoreGoneTest, ALostConnectionNamesTheServerInOurWords) {
  ASSERT_TRUE(open_postgres_store(db_url_, {}).has_value());  // the tables
  pqxx::connection c(db_url_);
  store::prepare_statements(c);
  go_away();
  for (int i = 0; i < 2; ++i) {  // the first finds it closed; the second starts on it closed
    store::PostgresTransaction tx(c, db_url_);
    Result<std::optional<JobRecord>> j = tx.get_job("k1");
    ASSERT_FALSE(j.has_value());
    EXPECT_EQ(tx.abort(), store::Abort::kReconnect);
    EXPECT_EQ(j.error().code, ErrorCode::kUnavailable);
    const std::string& m = j.error().message;
    EXPECT_NE(m.find("reading job 'k1': lost the connection to " + db_url_ + " "),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("check that the server runs"), std::string::npos) << m;
    EXPECT_EQ(m.find("client encoding"), std::string::npos) << m;
    EXPECT_FALSE(c.is_open());
  }
  store::PostgresTransaction tx(c, db_url_);
  Result<void> p = tx.ping();
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(p.error().message.find("checking the connection: lost the connection to " + db_url_),
            std::string::npos)
      << p.error().message;
}

TEST_F(PostgresStoreTest, UnreachableServerIsUnavailableAndHidesThePassword) {
  Result<std::unique_ptr<Store>> s =
      open_postgres_store("postgresql://zeus:sekrit@127.0.0.1:1/zeus?connect_timeout=2");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(s.error().message.find("sekrit"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("zeus:***@127.0.0.1:1"), std::string::npos) << s.error().message;
  // libpq's several lines ("could not connect…", "Is the server running…?") come as one.
  EXPECT_EQ(s.error().message.find('\n'), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("; "), std::string::npos) << s.error().message;
}

// A database error's DETAIL and HINT lines join its first line.
TEST(DatabaseMessage, LibpqLinesBecomeOne) {
  const std::runtime_error e(
      "ERROR:  relation \"x\" does not exist\nLINE 1: SELECT 1 FROM x\n\t^\n  HINT:  create it\n");
  EXPECT_EQ(store::database_message(e),
            "ERROR:  relation \"x\" does not exist; LINE 1: SELECT 1 FROM x; ^; HINT:  create it");
}

TEST_F(PostgresStoreTest, RejectsBadOptions) {
  PostgresStoreOptions options;
  options.pool_size = 0;
  EXPECT_EQ(open_postgres_store(url_, options).error().code, ErrorCode::kInvalidArgument);
  options.pool_size = 1;
  options.schema = "x; DROP TABLE jobs";
  EXPECT_EQ(open_postgres_store(url_, options).error().code, ErrorCode::kInvalidArgument);
}

TEST(RedactDatabaseUrl, HidesOnlyThePassword) {
  EXPECT_EQ(redact_url("postgresql://u:p@h:5/db"), "postgresql://u:***@h:5/db");
  EXPECT_EQ(redact_url("postgres://u@h/db?x=1"), "postgres://u@h/db?x=1");
  EXPECT_EQ(redact_url("postgresql://h:5432/db"), "postgresql://h:5432/db");
  // Upstream's SQLAlchemy URLs carry a driver after '+' (issue 37).
  EXPECT_EQ(redact_url("mysql+asyncmy://me:secret@db:3306/Zeus"),
            "mysql+asyncmy://me:***@db:3306/Zeus");
  EXPECT_EQ(redact_url("postgresql+asyncpg://u:p@h/d"), "postgresql+asyncpg://u:***@h/d");
  EXPECT_EQ(redact_url("host=h password=secret dbname=d"), "host=h password=*** dbname=d");
  EXPECT_EQ(redact_url("password='a b' host=h"), "password=*** host=h");
}

}  // namespace
}  // namespace zeus
