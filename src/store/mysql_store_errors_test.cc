// MysqlStore's failure paths: a statement failing mid-transaction, connections the server closed
// (while in use, while idle, write-only), a server that went away, lock waits past the timeout,
// the schema version, tables of another engine, bad options, unreachable servers, wrong
// passwords and unknown databases, passwords never shown. Runs on the MariaDB test server
// (test_mysql.h), one database per test.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "store/mysql_store_fixture.h"
#include "store/mysql_transaction.h"
#include "zeus/common/redact_url.h"
#include "zeus/store/mysql_store.h"
#include "zeus/store/postgres_store.h"

namespace zeus {
namespace {

using testing_mysql::MysqlStoreTest;

JobRecord mysql_job(const std::string& id, const std::string& rng_state = "state") {
  return JobRecord{*validate_job_spec(testing_mysql::spec(id)), rng_state};
}

// A statement the server refuses (here text that is not UTF-8 for a utf8mb4 column) fails the
// transaction even when fn swallows the error; nothing of it is stored and the connection goes
// back to the pool usable (pool of 1).
TEST_F(MysqlStoreTest, AFailedStatementRollsBackAndLeavesTheConnectionClean) {
  std::unique_ptr<Store> store = open(1);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) { return tx.put_job(mysql_job("k1")); }));
  for (bool swallow : {false, true}) {
    Result<void> r = store->transact([&](StoreTransaction& tx) -> Result<void> {
      Result<std::optional<JobRecord>> j = tx.get_job("k1");
      if (!j) return fail(j.error());
      ZEUS_TRY(tx.put_trial(testing_mysql::dispatched("k1", 1)));
      Result<void> bad = tx.put_job(mysql_job("k1", "not UTF-8: \xff"));
      EXPECT_FALSE(bad.has_value());
      if (!bad && !swallow) return fail(bad.error());
      EXPECT_FALSE(tx.put_trial(testing_mysql::dispatched("k1", 2)).has_value());  // aborted
      return ok();
    });
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, ErrorCode::kInternal) << r.error().to_string();
    EXPECT_NE(r.error().message.find("writing job 'k1'"), std::string::npos) << r.error().message;
    ASSERT_TRUE(store->transact([&](StoreTransaction& tx) -> Result<void> {
      Result<std::vector<Trial>> ts = tx.get_trials("k1");
      if (!ts) return fail(ts.error());
      EXPECT_TRUE(ts->empty());
      EXPECT_EQ(tx.get_job("k1")->value().rng_state, "state");
      return ok();
    }));
  }
  ASSERT_TRUE(store->transact(
      [&](StoreTransaction& tx) { return tx.put_trial(testing_mysql::dispatched("k1", 1)); }));
}

TEST_F(MysqlStoreTest, RefusesANewerSchema) {
  ASSERT_NE(open(), nullptr);
  testing_mysql::exec("UPDATE " + database_ + ".zeus_schema SET version = 99");
  Result<std::unique_ptr<Store>> s = open_mysql_store(url_);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kNotSupported);
  EXPECT_NE(s.error().message.find("schema version 99"), std::string::npos) << s.error().message;
}

// A table without transactions (MyISAM) would lose the store's guarantees: refused by name.
TEST_F(MysqlStoreTest, RefusesATableOfAnotherEngineThanInnodb) {
  testing_mysql::exec("CREATE TABLE " + database_ +
                      ".jobs (job_id VARBINARY(255) NOT NULL PRIMARY KEY) ENGINE=MyISAM");
  Result<std::unique_ptr<Store>> s = open_mysql_store(url_);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kNotSupported);
  EXPECT_NE(s.error().message.find("table jobs"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("MyISAM"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("InnoDB"), std::string::npos) << s.error().message;
}

// A server-side end of the store's connection between transactions costs nothing: the next
// transaction runs on a new connection.
TEST_F(MysqlStoreTest, ReplacesAConnectionTheServerClosed) {
  std::unique_ptr<Store> store = open(1);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) { return tx.put_job(mysql_job("k1")); }));
  EXPECT_EQ(testing_mysql::kill_connections_to(database_), 1);
  Result<void> r = store->transact([&](StoreTransaction& tx) -> Result<void> {
    Result<std::optional<JobRecord>> j = tx.get_job("k1");
    if (!j) return fail(j.error());
    return tx.put_trial(testing_mysql::dispatched("k1", 1));
  });
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) -> Result<void> {
    EXPECT_EQ(tx.get_trials("k1")->size(), 1u);
    return ok();
  }));
}

// The server closes the pooled connection while two writers wait for it: the first to take it
// finds it closed and runs on a new one; neither fails, and the pool serves later transactions.
TEST_F(MysqlStoreTest, AClosedPooledConnectionIsReplacedForTheWritersWaitingForIt) {
  std::unique_ptr<Store> store = open(1);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) { return tx.put_job(mysql_job("k1")); }));
  std::atomic<int> queued{0};
  std::vector<std::thread> writers;
  Result<void> first = store->transact([&](StoreTransaction&) -> Result<void> {
    for (int n = 1; n <= 2; ++n) {
      writers.emplace_back([&, n] {
        ++queued;
        Result<void> r = store->transact([&](StoreTransaction& tx) -> Result<void> {
          Result<std::optional<JobRecord>> j = tx.get_job("k1");
          if (!j) return fail(j.error());
          return tx.put_trial(testing_mysql::dispatched("k1", n));
        });
        EXPECT_TRUE(r.has_value()) << r.error().to_string();
      });
    }
    while (queued < 2) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(testing_mysql::kill_connections_to(database_), 1);
    return ok();
  });
  ASSERT_TRUE(first.has_value()) << first.error().to_string();
  for (std::thread& t : writers) t.join();
  for (int k = 0; k < 3; ++k) {
    Result<void> r = store->transact([&](StoreTransaction& tx) -> Result<void> {
      Result<std::vector<Trial>> t = tx.get_trials("k1");
      if (!t) return fail(t.error());
      EXPECT_EQ(t->size(), 2u);
      return ok();
    });
    EXPECT_TRUE(r.has_value()) << r.error().to_string();
  }
}

// A transaction that only writes on a connection the server closed runs again on a new one
// (nothing reached the server: no in-doubt COMMIT).
TEST_F(MysqlStoreTest, AWriteOnlyTransactionReplacesAConnectionTheServerClosed) {
  std::unique_ptr<Store> store = open(1);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) { return tx.put_job(mysql_job("k1")); }));
  EXPECT_EQ(testing_mysql::kill_connections_to(database_), 1);
  Result<void> r =
      store->transact([&](StoreTransaction& tx) { return tx.put_job(mysql_job("k1", "state 2")); });
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) -> Result<void> {
    EXPECT_EQ(tx.get_job("k1")->value().rng_state, "state 2");
    return ok();
  }));
}

// A lock held past innodb_lock_wait_timeout (the store sets it from retry_timeout_s) is a
// conflict: the waiter runs again until retry_timeout_s, then gives up saying so.
TEST_F(MysqlStoreTest, ALockHeldPastTheRetryTimeoutGivesUpWithTheReason) {
  std::unique_ptr<Store> holder = open(1);
  ASSERT_NE(holder, nullptr);
  ASSERT_TRUE(holder->transact([&](StoreTransaction& tx) { return tx.put_job(mysql_job("k1")); }));
  MysqlStoreOptions impatient;
  impatient.pool_size = 1;
  impatient.retry_timeout_s = 1.0;
  Result<std::unique_ptr<Store>> waiter = open_mysql_store(url_, impatient);
  ASSERT_TRUE(waiter.has_value()) << waiter.error().to_string();
  std::atomic<bool> locked{false}, done{false};
  std::thread hold([&] {
    EXPECT_TRUE(holder->transact([&](StoreTransaction& tx) -> Result<void> {
      ZEUS_TRY(tx.get_job("k1").map([](auto&&) {}));
      locked = true;
      while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      return ok();
    }));
  });
  while (!locked) std::this_thread::yield();
  const auto start = std::chrono::steady_clock::now();
  Result<void> r = (*waiter)->transact(
      [&](StoreTransaction& tx) -> Result<void> { return tx.get_job("k1").map([](auto&&) {}); });
  const double waited_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  done = true;
  hold.join();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(r.error().message.find("gave up after"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("1205"), std::string::npos) << r.error().message;
  EXPECT_GE(waited_s, 0.9);
  EXPECT_LT(waited_s, 10.0);
}

// A user of the test's own, whose account the test can lock (no new connection) and whose
// connections it can end: to the store, its server has gone away, while the other tests go on
// using the server. Its password holds characters a URL must %-encode.
class MysqlStoreGoneTest : public MysqlStoreTest {
 protected:
  void SetUp() override {
    MysqlStoreTest::SetUp();
    if (HasFatalFailure()) return;
    user_ = database_;
    testing_mysql::exec("CREATE USER '" + user_ + "'@'127.0.0.1' IDENTIFIED BY 'p@ss:w/rd%1'");
    testing_mysql::exec("GRANT ALL PRIVILEGES ON " + database_ + ".* TO '" + user_ +
                        "'@'127.0.0.1'");
    const std::string base = url_.substr(url_.find('@') + 1);  // 127.0.0.1:PORT/db
    user_url_ = "mysql://" + user_ + ":p%40ss%3Aw%2Frd%251@" + base;
    shown_url_ = "mysql://" + user_ + ":***@" + base;
  }
  void TearDown() override {
    if (!user_.empty()) testing_mysql::exec("DROP USER IF EXISTS '" + user_ + "'@'127.0.0.1'");
    MysqlStoreTest::TearDown();
  }
  void go_away() {
    testing_mysql::exec("ALTER USER '" + user_ + "'@'127.0.0.1' ACCOUNT LOCK");
    testing_mysql::kill_connections_to(database_);
  }
  void come_back() { testing_mysql::exec("ALTER USER '" + user_ + "'@'127.0.0.1' ACCOUNT UNLOCK"); }

  // The one clear message of a server that cannot be reached: where, and the fix; never the
  // password, never an empty job name.
  void expect_cannot_connect(const Result<void>& r, const std::string& doing) {
    ASSERT_FALSE(r.has_value()) << doing;
    EXPECT_EQ(r.error().code, ErrorCode::kUnavailable) << doing;
    const std::string& m = r.error().message;
    EXPECT_NE(m.find("cannot connect to " + shown_url_ + ": "), std::string::npos)
        << doing << ": " << m;
    EXPECT_NE(m.find("check that the server runs and the URL is right"), std::string::npos)
        << doing << ": " << m;
    EXPECT_EQ(m.find("''"), std::string::npos) << doing << ": " << m;
    EXPECT_EQ(m.find("p@ss"), std::string::npos) << doing << ": " << m;
    EXPECT_EQ(m.find("p%40ss"), std::string::npos) << doing << ": " << m;
  }

  std::string user_;
  std::string user_url_;   // with the %-encoded password
  std::string shown_url_;  // as messages show it
};

// As PostgresStoreGoneTest: the pool holds connections the server closed when it
// went away. A health check, a request that reads and one that only writes each get "cannot
// connect to <URL>…", however many closed connections the pool holds; back, they succeed.
TEST_F(MysqlStoreGoneTest, AServerThatWentAwayIsCannotConnectOnEveryPath) {
  MysqlStoreOptions options;
  options.pool_size = 4;
  Result<std::unique_ptr<Store>> opened = open_mysql_store(user_url_, options);
  ASSERT_TRUE(opened.has_value()) << opened.error().to_string();
  Store& store = **opened;
  ASSERT_TRUE(store.transact([&](StoreTransaction& tx) { return tx.put_job(mysql_job("k1")); }));
  std::atomic<int> inside{0};
  std::vector<std::thread> users;
  for (int i = 0; i < 4; ++i) {  // four transactions at once: the pool opens four connections
    users.emplace_back([&] {
      Result<void> r = store.transact([&](StoreTransaction& tx) -> Result<void> {
        ++inside;
        while (inside < 4) std::this_thread::yield();
        return tx.list_jobs().map([](auto&&) {});
      });
      EXPECT_TRUE(r.has_value()) << r.error().to_string();
    });
  }
  for (std::thread& t : users) t.join();

  go_away();
  for (int round = 0; round < 3; ++round) {  // more attempts than the pool has connections
    expect_cannot_connect(store.ping(), "ping");
    expect_cannot_connect(store.transact([&](StoreTransaction& tx) -> Result<void> {
      return tx.get_job("k1").map([](auto&&) {});
    }),
                          "a read");
    expect_cannot_connect(
        store.transact([&](StoreTransaction& tx) { return tx.put_job(mysql_job("k1")); }),
        "a write-only transaction");
  }
  come_back();
  Result<void> back = store.ping();
  EXPECT_TRUE(back.has_value()) << back.error().to_string();
  back = store.transact(
      [&](StoreTransaction& tx) { return tx.put_trial(testing_mysql::dispatched("k1", 1)); });
  EXPECT_TRUE(back.has_value()) << back.error().to_string();
}

// The server goes away in the middle of a request (between its read and its write).
TEST_F(MysqlStoreGoneTest, AServerThatGoesAwayMidRequestIsCannotConnect) {
  Result<std::unique_ptr<Store>> opened = open_mysql_store(user_url_);
  ASSERT_TRUE(opened.has_value()) << opened.error().to_string();
  ASSERT_TRUE(
      (*opened)->transact([&](StoreTransaction& tx) { return tx.put_job(mysql_job("k1")); }));
  bool gone = false;
  Result<void> r = (*opened)->transact([&](StoreTransaction& tx) -> Result<void> {
    ZEUS_TRY(tx.get_job("k1").map([](auto&&) {}));
    if (!gone) go_away();
    gone = true;
    return tx.put_trial(testing_mysql::dispatched("k1", 1));
  });
  expect_cannot_connect(r, "a request");
}

// A transaction on a connection found closed names the server and the fix in our words.
TEST_F(MysqlStoreGoneTest, ALostConnectionNamesTheServerInOurWords) {
  ASSERT_TRUE(open_mysql_store(user_url_).has_value());  // the tables
  Result<store::MysqlUrl> where = store::parse_mysql_url(user_url_);
  ASSERT_TRUE(where.has_value()) << where.error().to_string();
  EXPECT_EQ(where->password, "p@ss:w/rd%1");
  EXPECT_EQ(where->shown, shown_url_);
  auto c = store::MysqlConnection::open(*where, 5);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  go_away();
  store::MysqlTransaction tx(**c, where->shown);
  Result<std::optional<JobRecord>> j = tx.get_job("k1");
  ASSERT_FALSE(j.has_value());
  EXPECT_EQ(tx.abort(), store::MysqlAbort::kReconnect);
  EXPECT_EQ(j.error().code, ErrorCode::kUnavailable);
  const std::string& m = j.error().message;
  EXPECT_NE(m.find("reading job 'k1': lost the connection to " + shown_url_ + " "),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("check that the server runs"), std::string::npos) << m;
  EXPECT_TRUE((*c)->broken());
  EXPECT_FALSE(tx.commit().has_value());  // refused: the transaction failed
}

TEST_F(MysqlStoreTest, UnreachableServerIsUnavailableAndHidesThePassword) {
  Result<std::unique_ptr<Store>> s =
      open_mysql_store("mysql://zeus:sekrit@127.0.0.1:1/zeus?connect_timeout=2");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kUnavailable);
  const std::string& m = s.error().message;
  EXPECT_EQ(m.find("sekrit"), std::string::npos) << m;
  EXPECT_NE(m.find("cannot connect to mysql://zeus:***@127.0.0.1:1/zeus"), std::string::npos) << m;
  EXPECT_NE(m.find("check that the server runs and the URL is right"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
}

// A wrong password and a database that does not exist: each named, with the fix, the password
// never shown.
TEST_F(MysqlStoreTest, AWrongPasswordAndAnUnknownDatabaseAreNamed) {
  const size_t colon = url_.find(':', 8), at = url_.find('@');
  const std::string wrong = url_.substr(0, colon + 1) + "wrong-pw" + url_.substr(at);
  Result<std::unique_ptr<Store>> s = open_mysql_store(wrong);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(s.error().message.find("Access denied"), std::string::npos) << s.error().message;
  EXPECT_EQ(s.error().message.find("wrong-pw"), std::string::npos) << s.error().message;

  s = open_mysql_store(testing_mysql::url_of("no_such_database"));
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(s.error().message.find("CREATE DATABASE no_such_database"), std::string::npos)
      << s.error().message;
  EXPECT_EQ(s.error().message.find(url_.substr(colon + 1, at - colon - 1)), std::string::npos)
      << "the password is shown: " << s.error().message;
}

// ?unix_socket=/path connects through the server's socket (no host needed); a socket that is
// not there is Unavailable naming it.
TEST_F(MysqlStoreTest, ConnectsThroughAUnixSocket) {
  const std::string socket = testing_mysql::socket_path();
  ASSERT_FALSE(socket.empty());
  const std::string userinfo = url_.substr(8, url_.find('@') - 8);  // after "mysql://"
  for (const std::string& u :
       {"mysql://" + userinfo + "@/" + database_ + "?unix_socket=" + socket,
        "mariadb://" + userinfo + "@localhost/" + database_ + "?unix_socket=" + socket}) {
    Result<std::unique_ptr<Store>> s = open_mysql_store(u);
    ASSERT_TRUE(s.has_value()) << s.error().to_string();
    EXPECT_TRUE((*s)->transact([&](StoreTransaction& tx) { return tx.put_job(mysql_job("k1")); }));
  }
  Result<std::unique_ptr<Store>> missing =
      open_mysql_store("mysql://" + userinfo + "@/" + database_ + "?unix_socket=/nonexistent.sock");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(missing.error().message.find("unix_socket=/nonexistent.sock"), std::string::npos)
      << missing.error().message;
}

TEST_F(MysqlStoreTest, RejectsBadOptionsAndUrls) {
  MysqlStoreOptions options;
  options.pool_size = 0;
  EXPECT_EQ(open_mysql_store(url_, options).error().code, ErrorCode::kInvalidArgument);
  Result<std::unique_ptr<Store>> s = open_mysql_store(url_ + "?tls=on");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(s.error().message.find("unknown parameter 'tls'"), std::string::npos)
      << s.error().message;
}

// TLS is asked for by the URL and enforced: the test server has no certificate, so a store that
// requires TLS (as a remote database should) is refused by the connector instead of talking in
// clear; the same URL without it connects.
TEST_F(MysqlStoreTest, RequiredTlsIsEnforcedNotSilentlyDropped) {
  for (const char* tls : {"?ssl_mode=REQUIRED", "?ssl=true", "?sslmode=require"}) {
    Result<std::unique_ptr<Store>> s = open_mysql_store(url_ + tls);
    ASSERT_FALSE(s.has_value()) << tls << ": connected without TLS";
    EXPECT_NE(s.error().message.find("SSL"), std::string::npos) << tls << ": " << s.error().message;
  }
  EXPECT_TRUE(open_mysql_store(url_ + "?ssl_mode=disabled").has_value());
}

// "localhost" with a port is that port over TCP (SQLAlchemy's reading), never the connector's
// default socket, where another server could answer.
TEST_F(MysqlStoreTest, LocalhostWithAPortIsReachedOverTcp) {
  std::string local = url_;
  const size_t at = local.rfind("@127.0.0.1:");
  ASSERT_NE(at, std::string::npos) << local;
  local.replace(at, std::string("@127.0.0.1:").size(), "@localhost:");
  Result<std::unique_ptr<Store>> s = open_mysql_store(local);
  ASSERT_TRUE(s.has_value()) << s.error().message;
}

TEST(RedactDatabaseUrl, MysqlForms) {
  EXPECT_EQ(redact_url("mysql://u:p@h:3306/db"), "mysql://u:***@h:3306/db");
  EXPECT_EQ(redact_url("mariadb://u:p%40ss@h/db?unix_socket=/s"),
            "mariadb://u:***@h/db?unix_socket=/s");
  // An unencoded '@' in the password: the userinfo ends at the authority's last '@'.
  EXPECT_EQ(redact_url("mysql://u:p@ss@h/db"), "mysql://u:***@h/db");
  EXPECT_EQ(redact_url("mysql://u:pw@/db?unix_socket=/run/a@b.sock"),
            "mysql://u:***@/db?unix_socket=/run/a@b.sock");
  EXPECT_EQ(redact_url("mysql://u@h/db?password=secret&x=1"),
            "mysql://u@h/db?password=***&x=1");
  EXPECT_EQ(redact_url("mysql://h:3306/db"), "mysql://h:3306/db");
}

// A password is hidden whatever it holds: '#', '/', '?' end no part of it early.
TEST(RedactDatabaseUrl, PasswordsWithUrlCharactersAreHiddenWhole) {
  for (const std::string pw : {"S3cr#tPw", "Ab/cd+ef==", "wh?at", "a/b?c#d@e", "p:w"}) {
    for (const std::string scheme : {"mysql", "mysql+asyncmy", "postgresql", "https"}) {
      const std::string shown = redact_url(scheme + "://zeus:" + pw + "@db.internal:5/zeus");
      EXPECT_EQ(shown, scheme + "://zeus:***@db.internal:5/zeus") << pw;
    }
    EXPECT_EQ(redact_url("http://u:" + pw + "@h"), "http://u:***@h") << pw;
  }
}

}  // namespace
}  // namespace zeus
