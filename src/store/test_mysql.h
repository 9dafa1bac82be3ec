// Where the store tests find a MariaDB (or MySQL) server, and one private database per test.
//
// The URL comes from env ZEUS_TEST_MARIADB_URL, else from the file named by
// ZEUS_TEST_MARIADB_URL_FILE (env, or compiled in by test/CMakeLists.txt), which the ctest
// fixture "mariadb" writes with scripts/mariadb_server.sh; its user may create databases and end
// connections. No URL is a test failure that says how to provide one, never a skip. exec() runs
// SQL through the store's own connection class (store/mysql_connection.h).
// Thread-safety: url() and unique_database() may be called from any thread; exec() opens a
// connection of its own per call.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <string>

#include "store/mysql_connection.h"
#include "store/mysql_url.h"

namespace zeus::testing_mysql {

// The test server's URL (mysql://zeus:…@127.0.0.1:PORT/zeus), or "" after recording a failure
// that explains how to get one.
inline std::string url() {
  if (const char* env = std::getenv("ZEUS_TEST_MARIADB_URL"); env && *env) return env;
  std::string file;
  if (const char* env = std::getenv("ZEUS_TEST_MARIADB_URL_FILE"); env && *env) file = env;
#ifdef ZEUS_TEST_MARIADB_URL_FILE
  if (file.empty()) file = ZEUS_TEST_MARIADB_URL_FILE;
#endif
  std::string out;
  if (!file.empty()) {
    std::ifstream in(file);
    std::getline(in, out);
  }
  if (out.empty()) {
    ADD_FAILURE() << "no MariaDB server for the store tests: run them with ctest (its fixture "
                     "'mariadb' starts one with scripts/mariadb_server.sh and writes "
                  << (file.empty() ? "the URL file" : file)
                  << "), or start one yourself (scripts/mariadb_server.sh start DIR) and set "
                     "ZEUS_TEST_MARIADB_URL to the URL it prints";
  }
  return out;
}

// The URL of database `name` on the test server (same user, host and port).
inline std::string url_of(const std::string& name) {
  const std::string base = url();
  return base.substr(0, base.rfind('/') + 1) + name;
}

// A database name no other test process uses.
inline std::string unique_database() {
  static std::atomic<int> counter{0};
  return "zeus_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
}

// Runs constant SQL on the test server outside any store (set-up and clean-up of tests); a
// failure is a test failure.
inline void exec(const std::string& sql) {
  Result<store::MysqlUrl> where = store::parse_mysql_url(url());
  ASSERT_TRUE(where.has_value()) << where.error().to_string();
  auto c = store::MysqlConnection::open(*where, 10);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  auto r = (*c)->execute(sql);
  ASSERT_TRUE(r.has_value()) << sql << ": " << r.error().to_string();
  auto committed = (*c)->commit();
  ASSERT_TRUE(committed.has_value()) << committed.error().to_string();
}

inline void create_database(const std::string& name) {
  exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4");
}

inline void drop_database(const std::string& name) { exec("DROP DATABASE IF EXISTS " + name); }

// Ends every connection to database `name` but the caller's (the server "closes" them, as
// KILL, a restart or wait_timeout does); returns how many it ended.
inline int kill_connections_to(const std::string& name) {
  static const store::MysqlStatement kConnections{
      "SELECT id FROM information_schema.processlist WHERE db = ? AND id <> CONNECTION_ID()",
      {store::MysqlColumn::kInt}};
  Result<store::MysqlUrl> where = store::parse_mysql_url(url());
  EXPECT_TRUE(where.has_value()) << where.error().to_string();
  if (!where) return 0;
  auto c = store::MysqlConnection::open(*where, 10);
  EXPECT_TRUE(c.has_value()) << c.error().to_string();
  if (!c) return 0;
  auto ids = (*c)->run(kConnections, {name});
  EXPECT_TRUE(ids.has_value()) << ids.error().to_string();
  if (!ids) return 0;
  int killed = 0;
  for (const store::MysqlRow& row : ids->rows) {
    // A number the server gave, not data from outside.
    if ((*c)->execute("KILL CONNECTION " + std::to_string(row[0].integer))) ++killed;
  }
  return killed;
}

// The test server's socket: ZEUS_TEST_MARIADB_SOCKET, else the file "socket" beside the URL
// file (scripts/mariadb_server.sh writes it); "" after recording a failure.
inline std::string socket_path() {
  if (const char* env = std::getenv("ZEUS_TEST_MARIADB_SOCKET"); env && *env) return env;
  std::string file;
  if (const char* env = std::getenv("ZEUS_TEST_MARIADB_URL_FILE"); env && *env) file = env;
#ifdef ZEUS_TEST_MARIADB_URL_FILE
  if (file.empty()) file = ZEUS_TEST_MARIADB_URL_FILE;
#endif
  std::string out;
  if (!file.empty()) {
    std::ifstream in(file.substr(0, file.rfind('/') + 1) + "socket");
    std::getline(in, out);
  }
  if (out.empty()) {
    ADD_FAILURE() << "no socket of the MariaDB test server: run the tests with ctest (fixture "
                     "'mariadb') or set ZEUS_TEST_MARIADB_SOCKET";
  }
  return out;
}

}  // namespace zeus::testing_mysql
