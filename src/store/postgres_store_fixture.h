// The fixture and helpers of the PostgresStore tests (postgres_store_test.cc,
// postgres_store_errors_test.cc): a store on the test cluster (test_postgres.h) in a schema of
// its own per test, a job spec and a dispatched trial.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "store/test_postgres.h"
#include "zeus/store/postgres_store.h"

namespace zeus::testing_pg {

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = testing_pg::url();
    ASSERT_FALSE(url_.empty());
    schema_ = testing_pg::unique_schema();
  }
  void TearDown() override {
    if (!url_.empty()) testing_pg::drop_schema(schema_);
  }

  std::unique_ptr<Store> open(int pool_size = 4, const std::string& url = "") {
    PostgresStoreOptions options;
    options.schema = schema_;
    options.pool_size = pool_size;
    Result<std::unique_ptr<Store>> s = open_postgres_store(url.empty() ? url_ : url, options);
    EXPECT_TRUE(s.has_value()) << s.error().to_string();
    return s ? std::move(*s) : nullptr;
  }

  std::string url_;
  std::string schema_;
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

inline Trial dispatched(const std::string& job_id, int number) {
  Trial t;
  t.job_id = job_id;
  t.trial_number = number;
  t.batch_size = 32;
  t.status = TrialStatus::kDispatched;
  t.dispatched_unix_s = 1.7e9 + 1.0 / 3.0;
  return t;
}

}  // namespace zeus::testing_pg
