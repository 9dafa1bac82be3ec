// MysqlStore with several stores on one database, as several `zeus serve` replicas share it:
// replicas driving the same jobs never duplicate, lose or prune twice; two creating one job
// register it once (the duplicate key runs the loser again); a deadlock between replicas is run
// again; each store's copy of a job is used only while no other changed it; replicas starting
// together create the tables once. Runs on the MariaDB test server (test_mysql.h).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "store/mysql_store_fixture.h"
#include "zeus/optimizer/batch_size_optimizer.h"
#include "zeus/store/mysql_store.h"

namespace zeus {
namespace {

using testing_mysql::MysqlStoreTest;

// Two replicas register the same new job with different configurations at the same moment: the
// job has no row to lock yet, so both read "no such job"; the second INSERT meets the first's row
// (duplicate key), runs again, and sees the job: one registration wins, the other is told the
// configuration differs — never two "created" answers.
TEST_F(MysqlStoreTest, TwoReplicasCreatingOneJobRegisterItOnce) {
  for (int round = 0; round < 5; ++round) {
    std::unique_ptr<Store> a = open(2), b = open(2);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    BatchSizeOptimizer bso_a(*a), bso_b(*b);
    const std::string id = "k-new-" + std::to_string(round);
    JobSpec spec_a = testing_mysql::spec(id), spec_b = testing_mysql::spec(id);
    spec_b.max_epochs = 9;
    std::atomic<int> ready{0};
    Result<Registration> ra, rb;
    std::thread ta([&] {
      ++ready;
      while (ready < 2) std::this_thread::yield();
      ra = bso_a.register_job(spec_a);
    });
    std::thread tb([&] {
      ++ready;
      while (ready < 2) std::this_thread::yield();
      rb = bso_b.register_job(spec_b);
    });
    ta.join();
    tb.join();
    const int created = (ra && ra->created) + (rb && rb->created);
    EXPECT_EQ(created, 1) << "round " << round;
    EXPECT_NE(ra.has_value(), rb.has_value()) << "round " << round;  // the loser: a conflict
    const Result<Registration>& loser = ra ? rb : ra;
    if (!loser) {
      EXPECT_NE(loser.error().message.find("different configuration"), std::string::npos);
    }
    Result<JobSnapshot> stored = bso_b.get_job(id);
    ASSERT_TRUE(stored.has_value()) << stored.error().to_string();
    EXPECT_EQ(stored->spec.max_epochs, ra ? 6 : 9) << "the stored job is the winner's";
  }
}

// The same race made certain: replica A reads "no such job", replica B creates it and commits,
// then A writes the job: its INSERT meets B's row, so A runs again, sees B's job and leaves it.
TEST_F(MysqlStoreTest, AJobCreatedMeanwhileMakesTheTransactionRunAgain) {
  std::unique_ptr<Store> a = open(1), b = open(1);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const JobRecord mine{*validate_job_spec(testing_mysql::spec("k1")), "mine"};
  const JobRecord theirs{*validate_job_spec(testing_mysql::spec("k1")), "theirs"};
  int runs = 0;
  bool b_committed = false;
  Result<void> r = a->transact([&](StoreTransaction& tx) -> Result<void> {
    ++runs;
    Result<std::optional<JobRecord>> found = tx.get_job("k1");
    if (!found) return fail(found.error());
    if (*found) return ok();  // run again: the other replica's job is there
    if (runs == 1) {
      // B needs no lock of A's: at READ COMMITTED, reading a missing row locks no gap.
      std::thread other([&] {
        b_committed =
            b->transact([&](StoreTransaction& o) { return o.put_job(theirs); }).has_value();
      });
      other.join();
    }
    return tx.put_job(mine);
  });
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_TRUE(b_committed);
  EXPECT_EQ(runs, 2);
  ASSERT_TRUE(a->transact([&](StoreTransaction& tx) -> Result<void> {
    Result<std::optional<JobRecord>> j = tx.get_job("k1");
    EXPECT_TRUE(j.has_value() && j->has_value());
    if (j && *j) {
      EXPECT_EQ((*j)->rng_state, "theirs");
    }
    return ok();
  }));
}

// Replicas that lock two jobs in opposite orders deadlock; InnoDB aborts one (1213), which runs
// again and commits: both transactions succeed, and each ran its fn once more at most.
TEST_F(MysqlStoreTest, ADeadlockBetweenReplicasIsRunAgain) {
  std::unique_ptr<Store> a = open(1), b = open(1);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(a->transact([&](StoreTransaction& tx) -> Result<void> {
    ZEUS_TRY(tx.put_job({*validate_job_spec(testing_mysql::spec("k1")), "s"}));
    return tx.put_job({*validate_job_spec(testing_mysql::spec("k2")), "s"});
  }));
  std::atomic<int> locked_first{0};
  std::atomic<int> runs{0};
  auto cross = [&](Store& store, const std::string& first, const std::string& second, int n) {
    return store.transact([&, n](StoreTransaction& tx) -> Result<void> {
      if (runs++ >= 4) return fail(ErrorCode::kInternal, "ran too often");
      ZEUS_TRY(tx.get_job(first).map([](auto&&) {}));
      ++locked_first;
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (locked_first < 2 && std::chrono::steady_clock::now() < until) {
        std::this_thread::yield();
      }
      ZEUS_TRY(tx.get_job(second).map([](auto&&) {}));
      return tx.put_trial(testing_mysql::dispatched(second, n));
    });
  };
  Result<void> ra, rb;
  std::thread ta([&] { ra = cross(*a, "k1", "k2", 1); });
  std::thread tb([&] { rb = cross(*b, "k2", "k1", 2); });
  ta.join();
  tb.join();
  ASSERT_TRUE(ra.has_value()) << ra.error().to_string();
  ASSERT_TRUE(rb.has_value()) << rb.error().to_string();
  EXPECT_EQ(runs.load(), 3) << "one of the two was run again after the deadlock";
  EXPECT_EQ(testing_mysql::trials_of(*a, "k2").size(), 1u);
  EXPECT_EQ(testing_mysql::trials_of(*a, "k1").size(), 1u);
}

// Two stores stand for two server replicas; 12 threads run whole job lifecycles on two jobs.
// Every answered next_batch_size has its own trial number (dense per job), every answered final
// report is stored as answered, and no pruning slot (round, batch size) is dispatched twice.
TEST_F(MysqlStoreTest, TwoReplicasNeverDuplicateLoseOrPruneTwice) {
  std::unique_ptr<Store> replicas[2] = {open(3), open(3)};
  ASSERT_NE(replicas[0], nullptr);
  ASSERT_NE(replicas[1], nullptr);
  BatchSizeOptimizer bso0(*replicas[0]), bso1(*replicas[1]);
  BatchSizeOptimizer* bsos[2] = {&bso0, &bso1};
  const std::vector<std::string> jobs = {"k1", "k2"};
  for (const std::string& j : jobs) {
    ASSERT_TRUE(bso0.register_job(testing_mysql::spec(j)).has_value());
  }
  struct Answered {
    std::string job_id;
    int trial_number;
    double time_s, energy_j;
    ReportDecision decision;
  };
  constexpr int kThreads = 12, kLifecycles = 4;
  std::vector<std::vector<Answered>> answered(kThreads);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      BatchSizeOptimizer& bso = *bsos[i % 2];
      const std::string& job = jobs[(i / 2) % 2];
      for (int k = 0; k < kLifecycles; ++k) {
        Result<TrialId> t = bso.next_batch_size(job);
        if (!t) {
          if (errors++ == 0) ADD_FAILURE() << t.error().to_string();
          continue;
        }
        const double step = 0.1 + 0.3 * (t->batch_size == 64) + 0.2 * (t->batch_size == 32);
        for (int epoch = 1; epoch <= 10; ++epoch) {
          const double time_s = epoch * t->batch_size / 16.0, energy_j = 150 * time_s;
          Result<ReportDecision> d = bso.report(
              {job, t->batch_size, t->trial_number, time_s, energy_j, step * epoch, epoch});
          if (!d) {
            if (errors++ == 0) ADD_FAILURE() << d.error().to_string();
            break;
          }
          if (d->stop_train) {
            answered[i].push_back({job, t->trial_number, time_s, energy_j, *d});
            break;
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  std::map<std::pair<std::string, int>, Answered> by_trial;
  for (const auto& list : answered) {
    for (const Answered& a : list) {
      EXPECT_TRUE(by_trial.emplace(std::make_pair(a.job_id, a.trial_number), a).second)
          << "trial " << a.trial_number << " of " << a.job_id << " was handed out twice";
    }
  }
  EXPECT_EQ(by_trial.size(), static_cast<size_t>(kThreads * kLifecycles));
  size_t trials_total = 0;
  for (const std::string& j : jobs) {
    Result<JobSnapshot> s = bso1.get_job(j);
    ASSERT_TRUE(s.has_value()) << s.error().to_string();
    trials_total += s->trials.size();
    std::set<std::pair<int, int>> pruning_slots;
    for (size_t n = 0; n < s->trials.size(); ++n) {
      const Trial& t = s->trials[n];
      EXPECT_EQ(t.trial_number, static_cast<int>(n) + 1);
      if (t.kind == TrialKind::kPruning) {
        EXPECT_TRUE(pruning_slots.insert({t.pruning_round, t.batch_size}).second)
            << "pruning round " << t.pruning_round << " explored batch size " << t.batch_size
            << " twice";
      }
      auto a = by_trial.find({j, t.trial_number});
      ASSERT_NE(a, by_trial.end()) << "stored trial " << t.trial_number << " was never answered";
      EXPECT_TRUE(t.ended());
      EXPECT_EQ(t.status == TrialStatus::kConverged, a->second.decision.converged);
      EXPECT_EQ(t.time_s, a->second.time_s);
      EXPECT_EQ(t.energy_j, a->second.energy_j);
    }
  }
  EXPECT_EQ(trials_total, by_trial.size());
}

// Each store keeps a copy of the jobs it read; a copy is used only while no other store changed
// the job (the version column): replica A sees every trial replica B adds, and its own.
TEST_F(MysqlStoreTest, ACopyIsUsedOnlyWhileNoOtherStoreChangedTheJob) {
  std::unique_ptr<Store> a = open(), b = open();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  JobRecord job{*validate_job_spec(testing_mysql::spec("k1")), "state"};
  ASSERT_TRUE(a->transact([&](StoreTransaction& tx) { return tx.put_job(job); }));
  auto trial_count = [](Store& store) {
    size_t count = 0;
    EXPECT_TRUE(store.transact([&](StoreTransaction& tx) -> Result<void> {
      auto loaded = tx.get_job_with_trials("k1");
      if (!loaded) return fail(loaded.error());
      count = (*loaded)->second.size();
      return ok();
    }));
    return count;
  };
  auto append = [](Store& store, int n) {
    EXPECT_TRUE(store.transact([&](StoreTransaction& tx) -> Result<void> {
      auto loaded = tx.get_job_with_trials("k1");
      if (!loaded) return fail(loaded.error());
      return tx.put_trial(testing_mysql::dispatched("k1", n));
    }));
  };
  for (int n = 1; n <= 6; n += 2) {
    EXPECT_EQ(trial_count(*a), static_cast<size_t>(n - 1));
    append(*b, n);  // a's copy is now stale
    EXPECT_EQ(trial_count(*a), static_cast<size_t>(n));
    append(*a, n + 1);  // a's own write: its copy and b's view agree
    EXPECT_EQ(trial_count(*b), static_cast<size_t>(n + 1));
    EXPECT_EQ(trial_count(*a), static_cast<size_t>(n + 1));
  }
  // A deleted and re-created job is never served from the old copy.
  ASSERT_TRUE(b->transact([&](StoreTransaction& tx) -> Result<void> {
    ZEUS_TRY(tx.delete_job("k1"));
    return tx.put_job(job);
  }));
  EXPECT_EQ(trial_count(*a), 0u);
}

// Several stores opened at once on an empty database (replicas starting together) create the
// tables once and all work.
TEST_F(MysqlStoreTest, ReplicasStartingTogetherCreateTheTablesOnce) {
  std::vector<std::unique_ptr<Store>> stores(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < stores.size(); ++i) {
    threads.emplace_back([&, i] { stores[i] = open(1); });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < stores.size(); ++i) {
    ASSERT_NE(stores[i], nullptr) << i;
    const std::string id = "k" + std::to_string(i);
    EXPECT_TRUE(stores[i]->transact([&](StoreTransaction& tx) {
      return tx.put_job({*validate_job_spec(testing_mysql::spec(id)), "s"});
    }));
  }
  Result<store::MysqlUrl> where = store::parse_mysql_url(url_);
  auto c = store::MysqlConnection::open(*where, 5);
  ASSERT_TRUE(c.has_value());
  static const store::MysqlStatement kCount{"SELECT COUNT(*) FROM zeus_schema",
                                            {store::MysqlColumn::kInt}};
  auto count = (*c)->run(kCount, {});
  ASSERT_TRUE(count.has_value());
  EXPECT_EQ(count->rows[0][0].integer, 1);
}

}  // namespace
}  // namespace zeus
