// Where the store tests find a PostgreSQL server, and one private schema per test.
//
// The URL comes from env ZEUS_TEST_PG_URL, else from the file named by ZEUS_TEST_PG_URL_FILE
// (env, or compiled in by test/CMakeLists.txt), which the ctest fixture "pg" writes with
// scripts/pg_cluster.sh. No URL is a test failure that says how to provide one, never a skip.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <pqxx/pqxx>
#include <string>

namespace zeus::testing_pg {

// The test cluster's URL, or "" after recording a failure that explains how to get one.
inline std::string url() {
  if (const char* env = std::getenv("ZEUS_TEST_PG_URL"); env && *env) return env;
  std::string file;
  if (const char* env = std::getenv("ZEUS_TEST_PG_URL_FILE"); env && *env) file = env;
#ifdef ZEUS_TEST_PG_URL_FILE
  if (file.empty()) file = ZEUS_TEST_PG_URL_FILE;
#endif
  std::string out;
  if (!file.empty()) {
    std::ifstream in(file);
    std::getline(in, out);
  }
  if (out.empty()) {
    ADD_FAILURE() << "no PostgreSQL server for the store tests: run them with ctest (its fixture "
                     "'pg' starts one with scripts/pg_cluster.sh and writes "
                  << (file.empty() ? "the URL file" : file)
                  << "), or start one yourself (scripts/pg_cluster.sh start DIR) and set "
                     "ZEUS_TEST_PG_URL to the URL it prints";
  }
  return out;
}

// A schema name no other test process uses.
inline std::string unique_schema() {
  static std::atomic<int> counter{0};
  return "zeus_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
}

// Runs SQL on the test server outside any store (set-up and clean-up of tests).
inline void exec(const std::string& sql) {
  pqxx::connection c(url());
  pqxx::nontransaction tx(c);
  tx.exec(sql);
}

inline void drop_schema(const std::string& schema) {
  exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
}

}  // namespace zeus::testing_pg
