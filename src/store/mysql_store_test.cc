// MysqlStore beyond the shared contract: persistence, commits visible to other connections,
// writers of one job taking turns, binary job ids, empty text, doubles, the tables' engine and
// character set. Runs on the MariaDB test server (test_mysql.h), one database per test; several
// stores on one database (replicas) are in mysql_store_replicas_test.cc, failure paths in
// mysql_store_errors_test.cc.
#include "zeus/store/mysql_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <thread>
#include <vector>

#include "store/mysql_store_fixture.h"
#include "zeus/optimizer/batch_size_optimizer.h"

namespace zeus {
namespace {

using testing_mysql::MysqlStoreTest;

TEST_F(MysqlStoreTest, ReopenedStoreHoldsCommittedJobsAndTrials) {
  {
    std::unique_ptr<Store> store = open();
    ASSERT_NE(store, nullptr);
    BatchSizeOptimizer bso(*store);
    ASSERT_TRUE(bso.register_job(testing_mysql::spec("k1")).has_value());
    TrialId t = *bso.next_batch_size("k1");
    ASSERT_TRUE(bso.report({"k1", t.batch_size, t.trial_number, 2.0, 50.0, 0.95, 3}));
    ASSERT_TRUE(store->transact(
        [](StoreTransaction& tx) { return tx.put_trial(testing_mysql::dispatched("k1", 2)); }));
  }
  std::unique_ptr<Store> store = open();
  ASSERT_NE(store, nullptr);
  BatchSizeOptimizer bso(*store);
  Result<JobSnapshot> s = bso.get_job("k1");
  ASSERT_TRUE(s.has_value()) << s.error().to_string();
  EXPECT_EQ(s->spec, *validate_job_spec(testing_mysql::spec("k1")));
  ASSERT_EQ(s->trials.size(), 2u);
  EXPECT_EQ(s->trials[0].status, TrialStatus::kConverged);
  EXPECT_EQ(s->trials[0].cost, 0.5 * 50.0 + 0.5 * 300 * 2.0);
  EXPECT_GT(s->trials[0].dispatched_unix_s, 1.6e9);             // stamped by the system clock
  EXPECT_EQ(s->trials[1], testing_mysql::dispatched("k1", 2));  // bit-exact doubles
  EXPECT_EQ(bso.next_batch_size("k1")->trial_number, 3);
}

// An answered transaction is committed on the server: a connection of its own (another
// process's view) sees it at once.
TEST_F(MysqlStoreTest, AnAnsweredTransactionIsCommittedOnTheServer) {
  std::unique_ptr<Store> store = open(1);
  ASSERT_NE(store, nullptr);
  BatchSizeOptimizer bso(*store);
  ASSERT_TRUE(bso.register_job(testing_mysql::spec("k1")).has_value());
  Result<TrialId> t = bso.next_batch_size("k1");
  ASSERT_TRUE(t.has_value()) << t.error().to_string();
  Result<store::MysqlUrl> where = store::parse_mysql_url(url_);
  ASSERT_TRUE(where.has_value());
  auto other = store::MysqlConnection::open(*where, 5);
  ASSERT_TRUE(other.has_value()) << other.error().to_string();
  static const store::MysqlStatement kStatus{
      "SELECT status FROM trials WHERE job_id = ? AND trial_number = ?",
      {store::MysqlColumn::kText}};
  auto read = (*other)->run(kStatus, {std::string("k1"), t->trial_number});
  ASSERT_TRUE(read.has_value()) << read.error().to_string();
  ASSERT_EQ(read->rows.size(), 1u);
  EXPECT_EQ(read->rows[0][0].text, "dispatched");
}

// Two replicas write the same job at once: the second waits for the first's row lock, then reads
// what it committed (without the lock both would read no trial and write trial 1).
TEST_F(MysqlStoreTest, WritersOfOneJobTakeTurns) {
  std::unique_ptr<Store> store = open();
  std::unique_ptr<Store> other = open();
  ASSERT_NE(store, nullptr);
  ASSERT_NE(other, nullptr);
  JobRecord job{*validate_job_spec(testing_mysql::spec("k1")), "state"};
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) { return tx.put_job(job); }));
  auto append = [](StoreTransaction& tx, const std::function<void()>& between) -> Result<void> {
    Result<std::vector<Trial>> trials = tx.get_trials("k1");
    if (!trials) return fail(trials.error());
    between();
    return tx.put_trial(testing_mysql::dispatched("k1", static_cast<int>(trials->size()) + 1));
  };
  std::atomic<bool> first_has_read{false};
  int first_runs = 0, second_runs = 0;
  std::thread second;
  Result<void> r = store->transact([&](StoreTransaction& tx) {
    ++first_runs;
    return append(tx, [&] {
      if (first_has_read.exchange(true)) return;
      second = std::thread([&] {
        Result<void> s = other->transact([&](StoreTransaction& o) {
          ++second_runs;
          return append(o, [] {});
        });
        EXPECT_TRUE(s.has_value()) << s.error().to_string();
      });
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the second one waits
    });
  });
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  second.join();
  EXPECT_EQ(first_runs, 1);
  EXPECT_EQ(second_runs, 1);
  const std::vector<Trial> stored = testing_mysql::trials_of(*store, "k1");
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].trial_number, 1);
  EXPECT_EQ(stored[1].trial_number, 2);
}

// Job ids are bytes: case and trailing spaces matter (no MySQL collation folds them), UTF-8 and
// ids up to 1024 bytes round-trip; a longer id is refused with the limit named.
TEST_F(MysqlStoreTest, JobIdsAreComparedByteForByte) {
  std::unique_ptr<Store> store = open();
  ASSERT_NE(store, nullptr);
  const std::vector<std::string> ids = {"kA", "ka", "ka ", "k\xc3\xa9t\xc3\xa9",
                                        "k" + std::string(kMysqlStoreMaxJobIdBytes - 1, 'x')};
  for (const std::string& id : ids) {
    JobSpec s = testing_mysql::spec(id);
    ASSERT_TRUE(store->transact([&](StoreTransaction& tx) -> Result<void> {
      ZEUS_TRY(tx.put_job({s, "rng " + id}));
      return tx.put_trial(testing_mysql::dispatched(id, 1));
    }));
  }
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) -> Result<void> {
    Result<std::vector<std::string>> listed = tx.list_jobs();
    if (!listed) return fail(listed.error());
    std::vector<std::string> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(*listed, sorted);
    for (const std::string& id : ids) {
      Result<std::optional<JobRecord>> j = tx.get_job(id);
      EXPECT_TRUE(j.has_value() && j->has_value()) << id;
      if (j && *j) {
        EXPECT_EQ((*j)->rng_state, "rng " + id);
      }
    }
    EXPECT_FALSE(tx.get_job("KA")->has_value());
    return ok();
  }));
  JobSpec too_long = testing_mysql::spec("k" + std::string(kMysqlStoreMaxJobIdBytes, 'x'));
  Result<void> r = store->transact([&](StoreTransaction& tx) {
    return tx.put_job({too_long, "r"});
  });
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("1024 bytes"), std::string::npos) << r.error().message;
}

// Empty text is a value like any other (the connector reads a bound buffer of null as SQL NULL,
// which a NOT NULL column refuses): an empty random state and gpu_model round-trip.
TEST_F(MysqlStoreTest, EmptyTextRoundTrips) {
  std::unique_ptr<Store> store = open();
  ASSERT_NE(store, nullptr);
  JobSpec s = testing_mysql::spec("k1");
  s.gpu_model = "";
  const JobRecord job{*validate_job_spec(s), ""};
  Result<void> r = store->transact([&](StoreTransaction& tx) { return tx.put_job(job); });
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) -> Result<void> {
    Result<std::optional<JobRecord>> j = tx.get_job("k1");
    EXPECT_TRUE(j.has_value() && j->has_value());
    if (j && *j) {
      EXPECT_EQ(**j, job);
    }
    return ok();
  }));
}

// Finite doubles read back bit for bit, the extreme ones included (bound values travel in
// binary), except -0, which reads back as 0 (MySQL keeps no sign of zero); MySQL has no infinity
// or NaN, so those are refused by name, and nothing is stored.
TEST_F(MysqlStoreTest, FiniteDoublesRoundTripBitForBitAndOthersAreRefused) {
  std::unique_ptr<Store> store = open();
  ASSERT_NE(store, nullptr);
  JobRecord job{*validate_job_spec(testing_mysql::spec("k1")), "state"};
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) { return tx.put_job(job); }));
  using L = std::numeric_limits<double>;
  const std::vector<double> values = {-0.0,         L::denorm_min(), -L::denorm_min(),
                                      L::min() / 3, L::max(),        L::lowest(),
                                      1.0 / 3.0,    1e-310,          1.7e9 + 1.0 / 3.0};
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) -> Result<void> {
    for (size_t i = 0; i < values.size(); ++i) {
      Trial t = testing_mysql::dispatched("k1", static_cast<int>(i) + 1);
      t.time_s = t.energy_j = t.cost = t.metric = t.dispatched_unix_s = values[i];
      ZEUS_TRY(tx.put_trial(t));
    }
    return ok();
  }));
  const std::vector<Trial> ts = testing_mysql::trials_of(*store, "k1");
  ASSERT_EQ(ts.size(), values.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    for (double got :
         {ts[i].time_s, ts[i].energy_j, ts[i].cost, ts[i].metric, ts[i].dispatched_unix_s}) {
      const double want = values[i] == 0 ? 0.0 : values[i];
      EXPECT_EQ(std::bit_cast<uint64_t>(got), std::bit_cast<uint64_t>(want)) << values[i];
    }
  }
  for (double bad : {L::infinity(), -L::infinity(), L::quiet_NaN()}) {
    Trial t = testing_mysql::dispatched("k1", 99);
    t.metric = bad;
    Result<void> r = store->transact([&](StoreTransaction& tx) { return tx.put_trial(t); });
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message.find("finite"), std::string::npos) << r.error().message;
  }
  EXPECT_EQ(testing_mysql::trials_of(*store, "k1").size(), values.size());
}

// The tables are InnoDB (transactions, row locks), in utf8mb4, with the schema version written.
TEST_F(MysqlStoreTest, TablesAreInnodbInUtf8mb4) {
  ASSERT_NE(open(), nullptr);
  Result<store::MysqlUrl> where = store::parse_mysql_url(url_);
  ASSERT_TRUE(where.has_value());
  auto c = store::MysqlConnection::open(*where, 5);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  static const store::MysqlStatement kTables{
      "SELECT table_name, engine, table_collation FROM information_schema.tables "
      "WHERE table_schema = DATABASE() ORDER BY table_name",
      {store::MysqlColumn::kText, store::MysqlColumn::kText, store::MysqlColumn::kText}};
  auto tables = (*c)->run(kTables, {});
  ASSERT_TRUE(tables.has_value()) << tables.error().to_string();
  ASSERT_EQ(tables->rows.size(), 3u);
  const char* names[] = {"jobs", "trials", "zeus_schema"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(tables->rows[i][0].text, names[i]);
    EXPECT_EQ(tables->rows[i][1].text, "InnoDB") << names[i];
    EXPECT_EQ(tables->rows[i][2].text.rfind("utf8mb4", 0), 0u) << tables->rows[i][2].text;
  }
  static const store::MysqlStatement kVersion{"SELECT version FROM zeus_schema",
                                              {store::MysqlColumn::kInt}};
  auto version = (*c)->run(kVersion, {});
  ASSERT_TRUE(version.has_value());
  ASSERT_EQ(version->rows.size(), 1u);
  EXPECT_EQ(version->rows[0][0].integer, kMysqlStoreSchemaVersion);
}

}  // namespace
}  // namespace zeus
