// The fixture and helpers of the MysqlStore tests (mysql_store_test.cc,
// mysql_store_errors_test.cc): a store on the test server (test_mysql.h) in a database of its own
// per test, a job spec, a dispatched trial and a job's stored trials. Helpers are called qualified
// (testing_mysql::spec): the store tests share unity batches with the PostgreSQL ones.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "store/test_mysql.h"
#include "zeus/store/mysql_store.h"

namespace zeus::testing_mysql {

class MysqlStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_url_ = testing_mysql::url();
    ASSERT_FALSE(base_url_.empty());
    database_ = testing_mysql::unique_database();
    testing_mysql::create_database(database_);
    url_ = url_of(database_);
  }
  void TearDown() override {
    if (!base_url_.empty()) testing_mysql::drop_database(database_);
  }

  std::unique_ptr<Store> open(int pool_size = 4, const std::string& url = "") {
    MysqlStoreOptions options;
    options.pool_size = pool_size;
    Result<std::unique_ptr<Store>> s = open_mysql_store(url.empty() ? url_ : url, options);
    EXPECT_TRUE(s.has_value()) << s.error().to_string();
    return s ? std::move(*s) : nullptr;
  }

  std::string base_url_;  // the server's own database
  std::string database_;  // this test's
  std::string url_;       // of this test's database
};

inline JobSpec spec(const std::string& id) {
  JobSpec s;
  s.job_id = id;
  s.job_id_prefix = "k";
  s.batch_sizes = {16, 32, 64, 128};
  s.default_batch_size = 32;
  s.eta_knob = 0.5;
  s.max_power_w = 300;
  s.target_metric = 0.9;
  s.max_epochs = 6;
  s.mab_seed = 7;
  return s;
}

// Every trial of the job (a transaction of its own; a failure is a test failure).
inline std::vector<Trial> trials_of(Store& store, const std::string& job_id) {
  std::vector<Trial> out;
  Result<void> r = store.transact([&](StoreTransaction& tx) -> Result<void> {
    Result<std::vector<Trial>> t = tx.get_trials(job_id);
    if (!t) return fail(t.error());
    out = *t;
    return ok();
  });
  EXPECT_TRUE(r.has_value()) << r.error().to_string();
  return out;
}

inline Trial dispatched(const std::string& job_id, int number) {
  Trial t;
  t.job_id = job_id;
  t.trial_number = number;
  t.batch_size = 32;
  t.status = TrialStatus::kDispatched;
  t.dispatched_unix_s = 1.7e9 + 1.0 / 3.0;
  return t;
}

}  // namespace zeus::testing_mysql
