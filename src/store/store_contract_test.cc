// The Store contract, run against every implementation: MemoryStore, SqliteStore, PostgresStore
// (on the test cluster, one schema per test: see test_postgres.h) and MysqlStore (on the MariaDB
// test server, one database per test: see test_mysql.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "store/test_mysql.h"
#include "store/test_postgres.h"
#include "zeus/optimizer/bso_store.h"
#include "zeus/store/mysql_store.h"
#include "zeus/store/postgres_store.h"
#include "zeus/store/sqlite_store.h"

namespace zeus {
namespace {

std::string temp_db_path() {
  static std::atomic<int> counter{0};
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("zeus_store_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return (dir / "bso.db").string();
}

struct MemoryFactory {
  static std::unique_ptr<Store> open(const std::string&) { return make_memory_store(); }
  static void remove() {}
};

struct SqliteFactory {
  static std::unique_ptr<Store> open(const std::string& path) {
    Result<std::unique_ptr<Store>> s = open_sqlite_store(path);
    EXPECT_TRUE(s.has_value()) << s.error().to_string();
    return s ? std::move(*s) : nullptr;
  }
  static void remove() {}
};

struct PostgresFactory {
  static inline std::string schema;
  static std::unique_ptr<Store> open(const std::string&) {
    const std::string url = testing_pg::url();
    if (url.empty()) return nullptr;
    schema = testing_pg::unique_schema();
    PostgresStoreOptions options;
    options.schema = schema;
    Result<std::unique_ptr<Store>> s = open_postgres_store(url, options);
    EXPECT_TRUE(s.has_value()) << s.error().to_string();
    return s ? std::move(*s) : nullptr;
  }
  static void remove() {
    if (!schema.empty()) testing_pg::drop_schema(schema);
    schema.clear();
  }
};

struct MariadbFactory {
  static inline std::string database;
  static std::unique_ptr<Store> open(const std::string&) {
    if (testing_mysql::url().empty()) return nullptr;
    database = testing_mysql::unique_database();
    testing_mysql::create_database(database);
    Result<std::unique_ptr<Store>> s = open_mysql_store(testing_mysql::url_of(database));
    EXPECT_TRUE(s.has_value()) << s.error().to_string();
    return s ? std::move(*s) : nullptr;
  }
  static void remove() {
    if (!database.empty()) testing_mysql::drop_database(database);
    database.clear();
  }
};

JobRecord job(const std::string& id) {
  JobRecord r;
  r.spec.job_id = id;
  r.spec.job_id_prefix = "j";
  r.spec.batch_sizes = {16, 32, 64};
  r.spec.default_batch_size = 32;
  r.spec.max_power_w = 300.5;
  r.spec.eta_knob = 1.0 / 3.0;
  r.spec.beta_knob.reset();
  r.spec.mab_seed = 1234567890123LL;
  r.spec.gpu_model = "A100-SXM4-40GB";
  r.rng_state = "xoshiro256ss:" + std::string(64, 'a');
  return r;
}

Trial trial(const std::string& id, int number, TrialStatus status = TrialStatus::kConverged) {
  Trial t;
  t.job_id = id;
  t.trial_number = number;
  t.batch_size = 16 << (number % 3);
  t.kind = number % 2 ? TrialKind::kPruning : TrialKind::kMab;
  t.pruning_round = number % 2;
  t.status = status;
  t.time_s = number * 1.5;
  t.energy_j = number * 100.25;
  t.cost = number / 7.0;
  t.epochs = number + 1;
  t.metric = 0.1 * number;
  t.dispatched_unix_s = 1.7e9 + number / 3.0;
  return t;
}

template <typename Factory>
class StoreContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = temp_db_path();
    store_ = Factory::open(path_);
    ASSERT_NE(store_, nullptr);
  }
  void TearDown() override {
    store_.reset();
    Factory::remove();
    std::filesystem::remove_all(std::filesystem::path(path_).parent_path());
  }

  // Runs fn in a transaction and expects it to succeed.
  void tx(const std::function<Result<void>(StoreTransaction&)>& fn) {
    Result<void> r = store_->transact(fn);
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
  }
  std::optional<JobRecord> get_job(const std::string& id) {
    std::optional<JobRecord> out;
    tx([&](StoreTransaction& t) -> Result<void> {
      Result<std::optional<JobRecord>> j = t.get_job(id);
      if (!j) return fail(j.error());
      out = *j;
      return ok();
    });
    return out;
  }
  std::vector<Trial> get_trials(const std::string& id) {
    std::vector<Trial> out;
    tx([&](StoreTransaction& t) -> Result<void> {
      Result<std::vector<Trial>> ts = t.get_trials(id);
      if (!ts) return fail(ts.error());
      out = *ts;
      return ok();
    });
    return out;
  }

  std::string path_;
  std::unique_ptr<Store> store_;
};

using Factories = ::testing::Types<MemoryFactory, SqliteFactory, PostgresFactory, MariadbFactory>;
class FactoryNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    if (std::is_same_v<T, MemoryFactory>) return "Memory";
    if (std::is_same_v<T, MariadbFactory>) return "Mariadb";
    return std::is_same_v<T, SqliteFactory> ? "Sqlite" : "Postgres";
  }
};
TYPED_TEST_SUITE(StoreContractTest, Factories, FactoryNames);

TYPED_TEST(StoreContractTest, EmptyStore) {
  EXPECT_FALSE(this->get_job("x").has_value());
  EXPECT_TRUE(this->get_trials("x").empty());
  this->tx([](StoreTransaction& t) -> Result<void> {
    EXPECT_TRUE(t.list_jobs()->empty());
    EXPECT_FALSE(*t.delete_job("x"));
    return ok();
  });
}

// ping (GET /healthz) answers ok on a working store, before and after writes, and reads no job.
TYPED_TEST(StoreContractTest, PingIsOkOnAWorkingStore) {
  Result<void> r = this->store_->ping();
  EXPECT_TRUE(r.has_value()) << r.error().to_string();
  this->tx([&](StoreTransaction& t) { return t.put_job(job("j1")); });
  r = this->store_->ping();
  EXPECT_TRUE(r.has_value()) << r.error().to_string();
}

TYPED_TEST(StoreContractTest, JobRoundTripsExactlyAndIsReplaced) {
  const JobRecord a = job("j1");
  this->tx([&](StoreTransaction& t) { return t.put_job(a); });
  EXPECT_EQ(this->get_job("j1"), a);
  JobRecord changed = a;
  changed.rng_state = "xoshiro256ss:" + std::string(64, 'b');
  changed.spec.gpu_model = "H100";
  this->tx([&](StoreTransaction& t) { return t.put_job(changed); });
  EXPECT_EQ(this->get_job("j1"), changed);
  this->tx([&](StoreTransaction& t) { return t.put_job(job("j0")); });
  this->tx([](StoreTransaction& t) -> Result<void> {
    EXPECT_EQ(*t.list_jobs(), (std::vector<std::string>{"j0", "j1"}));
    return ok();
  });
}

TYPED_TEST(StoreContractTest, TrialsAreOrderedReplacedAndNeedTheirJob) {
  this->tx([&](StoreTransaction& t) { return t.put_job(job("j1")); });
  this->tx([&](StoreTransaction& t) -> Result<void> {
    for (int n : {3, 1, 2}) ZEUS_TRY(t.put_trial(trial("j1", n, TrialStatus::kDispatched)));
    return ok();
  });
  this->tx([&](StoreTransaction& t) { return t.put_trial(trial("j1", 2)); });
  const std::vector<Trial> ts = this->get_trials("j1");
  ASSERT_EQ(ts.size(), 3u);
  EXPECT_EQ(ts[0], trial("j1", 1, TrialStatus::kDispatched));
  EXPECT_EQ(ts[1], trial("j1", 2));
  EXPECT_EQ(ts[2].trial_number, 3);
  Result<void> orphan =
      this->store_->transact([&](StoreTransaction& t) { return t.put_trial(trial("nope", 1)); });
  ASSERT_FALSE(orphan.has_value());
  EXPECT_EQ(orphan.error().code, ErrorCode::kNotFound);
}

TYPED_TEST(StoreContractTest, JobWithTrialsIsTheJobAndItsTrialsInOneRead) {
  this->tx([&](StoreTransaction& t) -> Result<void> {
    ZEUS_TRY(t.put_job(job("j1")));
    ZEUS_TRY(t.put_job(job("j-empty")));
    for (int n : {2, 1}) ZEUS_TRY(t.put_trial(trial("j1", n)));
    return ok();
  });
  this->tx([&](StoreTransaction& t) -> Result<void> {
    auto both = t.get_job_with_trials("j1");
    EXPECT_TRUE(both.has_value() && both->has_value());
    EXPECT_EQ((*both)->first, job("j1"));
    EXPECT_EQ((*both)->second, (std::vector<Trial>{trial("j1", 1), trial("j1", 2)}));
    auto empty = t.get_job_with_trials("j-empty");
    EXPECT_TRUE(empty.has_value() && empty->has_value() && (*empty)->second.empty())
        << (empty.has_value() ? "no job or trials" : empty.error().message);
    auto none = t.get_job_with_trials("j-none");
    EXPECT_TRUE(none.has_value() && !none->has_value());
    return ok();
  });
}

TYPED_TEST(StoreContractTest, GroupedTransactionsFailAloneAndCommitTogether) {
  this->tx([&](StoreTransaction& t) { return t.put_job(job("j1")); });
  // Many concurrent callers (so the stores group them): every third fails after writing, and
  // its trial must not be stored while the others' are.
  std::vector<std::thread> threads;
  std::atomic<int> failed{0};
  for (int n = 1; n <= 30; ++n) {
    threads.emplace_back([&, n] {
      Result<void> r = this->store_->transact([&](StoreTransaction& t) -> Result<void> {
        ZEUS_TRY(t.put_trial(trial("j1", n)));
        if (n % 3 == 0) return fail(ErrorCode::kInvalidArgument, "refused after writing");
        return ok();
      });
      if (!r) ++failed;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed.load(), 10);
  const std::vector<Trial> ts = this->get_trials("j1");
  ASSERT_EQ(ts.size(), 20u);
  for (const Trial& t : ts) EXPECT_NE(t.trial_number % 3, 0) << t.trial_number;
}

TYPED_TEST(StoreContractTest, DeleteRemovesTheJobAndOnlyItsTrials) {
  this->tx([&](StoreTransaction& t) -> Result<void> {
    ZEUS_TRY(t.put_job(job("j1")));
    ZEUS_TRY(t.put_job(job("j2")));
    ZEUS_TRY(t.put_trial(trial("j1", 1)));
    return t.put_trial(trial("j2", 1));
  });
  this->tx([](StoreTransaction& t) -> Result<void> {
    EXPECT_TRUE(*t.delete_job("j1"));
    return ok();
  });
  EXPECT_FALSE(this->get_job("j1").has_value());
  EXPECT_TRUE(this->get_trials("j1").empty());
  EXPECT_EQ(this->get_trials("j2").size(), 1u);
  // Re-creating the job does not resurrect its trials.
  this->tx([&](StoreTransaction& t) { return t.put_job(job("j1")); });
  EXPECT_TRUE(this->get_trials("j1").empty());
}

TYPED_TEST(StoreContractTest, ReadsSeeTheTransactionsOwnWrites) {
  this->tx([&](StoreTransaction& t) -> Result<void> {
    ZEUS_TRY(t.put_job(job("j1")));
    ZEUS_TRY(t.put_trial(trial("j1", 1)));
    EXPECT_TRUE(t.get_job("j1")->has_value());
    EXPECT_EQ(t.get_trials("j1")->size(), 1u);
    EXPECT_TRUE(*t.delete_job("j1"));
    EXPECT_FALSE(t.get_job("j1")->has_value());
    return ok();
  });
}

TYPED_TEST(StoreContractTest, FailedTransactionLeavesNoTrace) {
  const JobRecord before = job("j1");
  this->tx([&](StoreTransaction& t) -> Result<void> {
    ZEUS_TRY(t.put_job(before));
    return t.put_trial(trial("j1", 1));
  });
  Result<void> r = this->store_->transact([&](StoreTransaction& t) -> Result<void> {
    JobRecord changed = before;
    changed.rng_state = "changed";
    ZEUS_TRY(t.put_job(changed));
    ZEUS_TRY(t.put_job(job("j2")));
    ZEUS_TRY(t.put_trial(trial("j1", 1, TrialStatus::kFailed)));
    ZEUS_TRY(t.put_trial(trial("j1", 2)));
    ZEUS_TRY(t.put_trial(trial("j2", 1)));
    EXPECT_TRUE(*t.delete_job("j1"));
    return fail(ErrorCode::kInvalidArgument, "changed my mind");
  });
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "changed my mind");
  EXPECT_EQ(this->get_job("j1"), before);
  EXPECT_FALSE(this->get_job("j2").has_value());
  EXPECT_EQ(this->get_trials("j1"), std::vector<Trial>{trial("j1", 1)});
  EXPECT_TRUE(this->get_trials("j2").empty());
}

// A transaction that throws is an error like any other: its writes are undone and the store
// goes on working.
TYPED_TEST(StoreContractTest, ThrowingTransactionIsAnErrorAndLeavesNoTrace) {
  const JobRecord before = job("j1");
  this->tx([&](StoreTransaction& t) { return t.put_job(before); });
  Result<void> r = this->store_->transact([&](StoreTransaction& t) -> Result<void> {
    ZEUS_TRY(t.put_trial(trial("j1", 1)));
    ZEUS_TRY(t.put_job(job("j2")));
    throw std::runtime_error("out of disk in my head");
  });
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInternal);
  EXPECT_NE(r.error().message.find("out of disk in my head"), std::string::npos);
  EXPECT_TRUE(this->get_trials("j1").empty());
  EXPECT_FALSE(this->get_job("j2").has_value());
  this->tx([&](StoreTransaction& t) { return t.put_trial(trial("j1", 1)); });
  EXPECT_EQ(this->get_trials("j1"), std::vector<Trial>{trial("j1", 1)});
}

TYPED_TEST(StoreContractTest, ConcurrentTransactionsAreIsolated) {
  this->tx([&](StoreTransaction& t) { return t.put_job(job("j1")); });
  // Each transaction reads the trial count and appends trial count+1: lost updates would
  // duplicate numbers.
  constexpr int kThreads = 4, kEach = 25;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      for (int k = 0; k < kEach; ++k) {
        Result<void> r = this->store_->transact([&](StoreTransaction& t) -> Result<void> {
          Result<std::vector<Trial>> ts = t.get_trials("j1");
          if (!ts) return fail(ts.error());
          return t.put_trial(trial("j1", static_cast<int>(ts->size()) + 1));
        });
        if (!r && failures++ == 0) ADD_FAILURE() << r.error().to_string();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  const std::vector<Trial> ts = this->get_trials("j1");
  ASSERT_EQ(ts.size(), static_cast<size_t>(kThreads * kEach));
  for (size_t i = 0; i < ts.size(); ++i) EXPECT_EQ(ts[i].trial_number, static_cast<int>(i) + 1);
}

}  // namespace
}  // namespace zeus
