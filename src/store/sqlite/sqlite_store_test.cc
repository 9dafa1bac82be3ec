// SqliteStore beyond the shared contract: persistence, WAL, schema version, several processes,
// and a process killed mid-transaction.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <set>
#include <thread>

#include "zeus/optimizer/batch_size_optimizer.h"
#include "zeus/store/sqlite_store.h"

namespace zeus {
namespace {

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("zeus_sqlite_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "bso.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Store> open() {
    Result<std::unique_ptr<Store>> s = open_sqlite_store(path_);
    EXPECT_TRUE(s.has_value()) << s.error().to_string();
    return s ? std::move(*s) : nullptr;
  }

  // Runs one SQL statement on the file with a separate connection; returns the first column.
  std::string raw_sql(const std::string& sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    std::string out;
    sqlite3_exec(
        db, sql.c_str(),
        [](void* p, int, char** values, char**) {
          *static_cast<std::string*>(p) = values[0] ? values[0] : "";
          return 0;
        },
        &out, nullptr);
    sqlite3_close(db);
    return out;
  }

  std::filesystem::path dir_;
  std::string path_;
};

JobSpec sqlite_spec(const std::string& id) {
  JobSpec s;
  s.job_id = id;
  s.job_id_prefix = "k";
  s.batch_sizes = {16, 32, 64};
  s.default_batch_size = 32;
  s.eta_knob = 1.0;
  s.max_power_w = 300;
  s.target_metric = 0.9;
  s.mab_seed = 3;
  return s;
}

TEST_F(SqliteStoreTest, ReopenedStoreHoldsCommittedJobsAndTrials) {
  {
    std::unique_ptr<Store> store = open();
    BatchSizeOptimizer bso(*store);
    ASSERT_TRUE(bso.register_job(sqlite_spec("k1")).has_value());
    TrialId t = *bso.next_batch_size("k1");
    ASSERT_TRUE(bso.report({"k1", t.batch_size, t.trial_number, 2.0, 50.0, 0.95, 3}));
  }
  std::unique_ptr<Store> store = open();
  BatchSizeOptimizer bso(*store);
  Result<JobSnapshot> s = bso.get_job("k1");
  ASSERT_TRUE(s.has_value()) << s.error().to_string();
  EXPECT_EQ(s->spec, *validate_job_spec(sqlite_spec("k1")));
  ASSERT_EQ(s->trials.size(), 1u);
  EXPECT_EQ(s->trials[0].status, TrialStatus::kConverged);
  EXPECT_EQ(s->trials[0].cost, 50.0);
  EXPECT_EQ(bso.next_batch_size("k1")->batch_size, 16);  // pruning continues downward
}

TEST_F(SqliteStoreTest, UsesWalAndRecordsTheSchemaVersion) {
  ASSERT_NE(open(), nullptr);
  EXPECT_EQ(raw_sql("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw_sql("PRAGMA user_version"), std::to_string(kSqliteStoreSchemaVersion));
}

TEST_F(SqliteStoreTest, UpgradesAVersion1FileAndKeepsDispatchTimes) {
  // A version-1 file (before trials had a dispatch time), written by an older build.
  raw_sql(
      "CREATE TABLE jobs (job_id TEXT PRIMARY KEY, spec_json TEXT NOT NULL, rng_state TEXT NOT "
      "NULL); CREATE TABLE trials (job_id TEXT NOT NULL REFERENCES jobs(job_id) ON DELETE "
      "CASCADE, trial_number INTEGER NOT NULL, batch_size INTEGER NOT NULL, kind TEXT NOT NULL, "
      "pruning_round INTEGER NOT NULL, status TEXT NOT NULL, time_s REAL NOT NULL, energy_j REAL "
      "NOT NULL, cost REAL NOT NULL, epochs INTEGER NOT NULL, metric REAL NOT NULL, PRIMARY KEY "
      "(job_id, trial_number)); PRAGMA user_version = 1;");
  {
    std::unique_ptr<Store> store = open();
    ASSERT_NE(store, nullptr);
    BatchSizeOptimizer bso(*store);
    ASSERT_TRUE(bso.register_job(sqlite_spec("k1")).has_value());
    ASSERT_TRUE(bso.next_batch_size("k1").has_value());
  }
  EXPECT_EQ(raw_sql("PRAGMA user_version"), std::to_string(kSqliteStoreSchemaVersion));
  std::unique_ptr<Store> store = open();
  BatchSizeOptimizer bso(*store);
  const double dispatched = bso.get_job("k1")->trials.at(0).dispatched_unix_s;
  EXPECT_GT(dispatched, 1.6e9);  // stamped with the system clock and read back
  Trial t = bso.get_job("k1")->trials.at(0);
  t.dispatched_unix_s = 1234.5;
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) { return tx.put_trial(t); }));
  EXPECT_EQ(bso.get_job("k1")->trials.at(0).dispatched_unix_s, 1234.5);
}

TEST_F(SqliteStoreTest, RefusesANewerSchema) {
  ASSERT_NE(open(), nullptr);
  raw_sql("PRAGMA user_version = 99");
  Result<std::unique_ptr<Store>> s = open_sqlite_store(path_);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kNotSupported);
  EXPECT_NE(s.error().message.find("schema version 99"), std::string::npos);
}

TEST_F(SqliteStoreTest, UnopenableFileIsUnavailable) {
  Result<std::unique_ptr<Store>> s = open_sqlite_store((dir_ / "missing" / "x.db").string());
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(s.error().message.find("writable"), std::string::npos);
}

// Two processes drive the same job through the same file: BEGIN IMMEDIATE serialises them, so
// trial numbers are unique and consecutive and every report lands on its own trial.
TEST_F(SqliteStoreTest, ProcessesSharingTheFileSerialise) {
  {
    std::unique_ptr<Store> store = open();
    BatchSizeOptimizer bso(*store);
    ASSERT_TRUE(bso.register_job(sqlite_spec("k1")).has_value());
  }
  constexpr int kProcesses = 2, kEach = 30;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      Result<std::unique_ptr<Store>> store = open_sqlite_store(path_);
      if (!store) _exit(2);
      BatchSizeOptimizer bso(**store);
      for (int i = 0; i < kEach; ++i) {
        Result<TrialId> t = bso.next_batch_size("k1");
        if (!t) _exit(3);
        if (!bso.report(
                {"k1", t->batch_size, t->trial_number, 1.0, 100.0 + t->batch_size, 0.95, 2})) {
          _exit(4);
        }
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
  std::unique_ptr<Store> store = open();
  BatchSizeOptimizer bso(*store);
  Result<JobSnapshot> s = bso.get_job("k1");
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->trials.size(), static_cast<size_t>(kProcesses * kEach));
  for (size_t i = 0; i < s->trials.size(); ++i) {
    EXPECT_EQ(s->trials[i].trial_number, static_cast<int>(i) + 1);
    EXPECT_EQ(s->trials[i].status, TrialStatus::kConverged);
    EXPECT_EQ(s->trials[i].cost, 100.0 + s->trials[i].batch_size);
  }
}

// A child writes transactions of four rows each (three trials and the job, whose gpu_model
// counts the trials) and tells the parent over a pipe after each commit. The parent SIGKILLs it
// mid-stream, three times; every committed transaction must be there, and none half.
TEST_F(SqliteStoreTest, KilledWriterLosesNothingCommittedAndLeavesNothingHalfWritten) {
  JobRecord record{*validate_job_spec(sqlite_spec("k1")), "xoshiro256ss:" + std::string(64, '1')};
  record.spec.gpu_model = "0";
  {
    std::unique_ptr<Store> store = open();
    ASSERT_TRUE(store->transact([&](StoreTransaction& t) { return t.put_job(record); }));
  }
  int acknowledged = 0;  // transactions the children reported committed, over all kills
  for (int kill_round = 0; kill_round < 3; ++kill_round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      Result<std::unique_ptr<Store>> store = open_sqlite_store(path_);
      if (!store) _exit(2);
      for (;;) {
        Result<void> r = (*store)->transact([&](StoreTransaction& t) -> Result<void> {
          Result<std::optional<JobRecord>> job = t.get_job("k1");
          if (!job || !*job) return fail(ErrorCode::kInternal, "job vanished");
          const int count = std::stoi((*job)->spec.gpu_model);
          for (int i = 1; i <= 3; ++i) {
            Trial trial;
            trial.job_id = "k1";
            trial.trial_number = count + i;
            trial.batch_size = 32;
            trial.status = TrialStatus::kConverged;
            trial.cost = trial.energy_j = 1000.0 + count + i;
            ZEUS_TRY(t.put_trial(trial));
          }
          (*job)->spec.gpu_model = std::to_string(count + 3);
          return t.put_job(**job);
        });
        if (!r) _exit(3);
        const char ack = 'c';
        if (write(fds[1], &ack, 1) != 1) _exit(4);
      }
    }
    close(fds[1]);
    char ack;
    int seen = 0;
    while (seen < 40 + 25 * kill_round && read(fds[0], &ack, 1) == 1) ++seen;
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
    while (read(fds[0], &ack, 1) == 1) ++seen;  // acks written before the kill
    close(fds[0]);
    acknowledged += seen;

    std::unique_ptr<Store> store = open();
    ASSERT_NE(store, nullptr);
    std::optional<JobRecord> job;
    std::vector<Trial> trials;
    ASSERT_TRUE(store->transact([&](StoreTransaction& t) -> Result<void> {
      job = *t.get_job("k1");
      trials = *t.get_trials("k1");
      return ok();
    }));
    ASSERT_TRUE(job.has_value());
    const int count = std::stoi(job->spec.gpu_model);
    EXPECT_EQ(count % 3, 0);
    EXPECT_EQ(static_cast<int>(trials.size()), count) << "trials and job disagree";
    EXPECT_GE(count, 3 * acknowledged) << "a committed transaction was lost";
    EXPECT_LE(count, 3 * (acknowledged + 1)) << "more than the one unacknowledged commit";
    for (size_t i = 0; i < trials.size(); ++i) {
      EXPECT_EQ(trials[i].trial_number, static_cast<int>(i) + 1);
      EXPECT_EQ(trials[i].cost, 1000.0 + trials[i].trial_number);
    }
    acknowledged = count / 3;  // a commit whose ack the kill swallowed still counts next round
  }
}

// A store keeps what it read in memory; it must notice another connection's commits (another
// process, or another store on the same file) before it answers from that copy.
TEST_F(SqliteStoreTest, CachedJobsFollowAnotherConnectionsWrites) {
  std::unique_ptr<Store> a = open();
  std::unique_ptr<Store> b = open();
  BatchSizeOptimizer bso_a(*a), bso_b(*b);
  ASSERT_TRUE(bso_a.register_job(sqlite_spec("k1")).has_value());
  TrialId first = *bso_a.next_batch_size("k1");
  ASSERT_EQ(bso_a.get_job("k1")->trials.size(), 1u);  // a has read (and kept) the history

  ASSERT_TRUE(bso_b.report({"k1", first.batch_size, first.trial_number, 2.0, 70.0, 0.95, 3}));
  TrialId second = *bso_b.next_batch_size("k1");
  EXPECT_EQ(second.trial_number, 2);

  Result<JobSnapshot> seen = bso_a.get_job("k1");
  ASSERT_TRUE(seen.has_value());
  ASSERT_EQ(seen->trials.size(), 2u) << "a answered from a stale copy";
  EXPECT_EQ(seen->trials[0].status, TrialStatus::kConverged);
  EXPECT_EQ(seen->trials[0].cost, 70.0);
  EXPECT_EQ(bso_a.next_batch_size("k1")->trial_number, 3) << "a reused a trial number";

  ASSERT_TRUE(bso_b.delete_job("k1").has_value());
  EXPECT_FALSE(bso_a.get_job("k1").has_value());
}

// A transaction that wrote and then failed leaves nothing, neither in the file nor in the copy
// the store keeps of a job it had read.
TEST_F(SqliteStoreTest, FailedTransactionLeavesNothingInTheKeptCopy) {
  std::unique_ptr<Store> store = open();
  BatchSizeOptimizer bso(*store);
  ASSERT_TRUE(bso.register_job(sqlite_spec("k1")).has_value());
  ASSERT_TRUE(bso.next_batch_size("k1").has_value());
  Trial extra = bso.get_job("k1")->trials.at(0);
  extra.trial_number = 2;
  JobRecord changed{*validate_job_spec(sqlite_spec("k1")), "changed"};
  Result<void> r = store->transact([&](StoreTransaction& tx) -> Result<void> {
    ZEUS_TRY(tx.put_trial(extra));
    ZEUS_TRY(tx.put_job(changed));
    return fail(ErrorCode::kInvalidArgument, "changed my mind");
  });
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "changed my mind");
  std::vector<Trial> trials;
  std::optional<JobRecord> job;
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) -> Result<void> {
    trials = *tx.get_trials("k1");
    job = *tx.get_job("k1");
    return ok();
  }));
  EXPECT_EQ(trials.size(), 1u);
  ASSERT_TRUE(job.has_value());
  EXPECT_NE(job->rng_state, "changed");
  EXPECT_EQ(raw_sql("SELECT COUNT(*) FROM trials"), "1");
}

// Threads share one store: their transactions are committed in batches, yet each one's failure
// undoes only its own writes and every success is in the file.
TEST_F(SqliteStoreTest, ConcurrentTransactionsCommitTogetherAndFailAlone) {
  std::unique_ptr<Store> store = open();
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) {
    return tx.put_job({*validate_job_spec(sqlite_spec("k1")), "rng"});
  }));
  constexpr int kThreads = 8, kEach = 40;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const int number = t * kEach + i + 1;
        Result<void> r = store->transact([&](StoreTransaction& tx) -> Result<void> {
          Trial trial;
          trial.job_id = "k1";
          trial.trial_number = number;
          trial.batch_size = 32;
          trial.cost = number;
          ZEUS_TRY(tx.put_trial(trial));
          if (number % 3 == 0) return fail(ErrorCode::kInvalidArgument, "no multiples of 3");
          return ok();
        });
        if (r.has_value() != (number % 3 != 0)) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong, 0);
  std::unique_ptr<Store> reopened = open();
  std::vector<Trial> trials;
  ASSERT_TRUE(reopened->transact([&](StoreTransaction& tx) -> Result<void> {
    trials = *tx.get_trials("k1");
    return ok();
  }));
  std::vector<int> expected;
  for (int n = 1; n <= kThreads * kEach; ++n) {
    if (n % 3 != 0) expected.push_back(n);
  }
  std::vector<int> numbers;
  for (const Trial& t : trials) numbers.push_back(t.trial_number);
  EXPECT_EQ(numbers, expected);
}

}  // namespace
}  // namespace zeus
