// PostgresStore beyond the shared contract: persistence, writers of one job taking turns, two
// stores (replicas) driving the same jobs, held-back writes, doubles. Runs on the test cluster
// (test_postgres.h), one schema per test; failure paths are in postgres_store_errors_test.cc.
#include "zeus/store/postgres_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "store/postgres_store_fixture.h"
#include "zeus/optimizer/batch_size_optimizer.h"

namespace zeus {
namespace {

using testing_pg::dispatched;
using testing_pg::PostgresStoreTest;
using testing_pg::spec;

TEST_F(PostgresStoreTest, ReopenedStoreHoldsCommittedJobsAndTrials) {
  {
    std::unique_ptr<Store> store = open();
    ASSERT_NE(store, nullptr);
    BatchSizeOptimizer bso(*store);
    ASSERT_TRUE(bso.register_job(spec("k1")).has_value());
    TrialId t = *bso.next_batch_size("k1");
    ASSERT_TRUE(bso.report({"k1", t.batch_size, t.trial_number, 2.0, 50.0, 0.95, 3}));
    ASSERT_TRUE(
        store->transact([](StoreTransaction& tx) { return tx.put_trial(dispatched("k1", 2)); }));
  }
  std::unique_ptr<Store> store = open();
  ASSERT_NE(store, nullptr);
  BatchSizeOptimizer bso(*store);
  Result<JobSnapshot> s = bso.get_job("k1");
  ASSERT_TRUE(s.has_value()) << s.error().to_string();
  EXPECT_EQ(s->spec, *validate_job_spec(spec("k1")));
  ASSERT_EQ(s->trials.size(), 2u);
  EXPECT_EQ(s->trials[0].status, TrialStatus::kConverged);
  EXPECT_EQ(s->trials[0].cost, 0.5 * 50.0 + 0.5 * 300 * 2.0);
  EXPECT_GT(s->trials[0].dispatched_unix_s, 1.6e9);  // stamped by the system clock
  EXPECT_EQ(s->trials[1], dispatched("k1", 2));      // bit-exact doubles
  EXPECT_EQ(bso.next_batch_size("k1")->trial_number, 3);
}

// Two replicas write the same job at once: the second waits for the first's job lock, then reads
// what it committed (without the lock both would read no trial and write trial 1).
TEST_F(PostgresStoreTest, WritersOfOneJobTakeTurns) {
  std::unique_ptr<Store> store = open();
  std::unique_ptr<Store> other = open();
  ASSERT_NE(store, nullptr);
  ASSERT_NE(other, nullptr);
  JobRecord job{*validate_job_spec(spec("k1")), "state"};
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) { return tx.put_job(job); }));
  // Appends the next trial number after the ones it reads.
  auto append = [](StoreTransaction& tx, const std::function<void()>& between) -> Result<void> {
    Result<std::vector<Trial>> trials = tx.get_trials("k1");
    if (!trials) return fail(trials.error());
    between();
    return tx.put_trial(dispatched("k1", static_cast<int>(trials->size()) + 1));
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
  std::vector<Trial> stored;
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) -> Result<void> {
    Result<std::vector<Trial>> t = tx.get_trials("k1");
    if (!t) return fail(t.error());
    stored = *t;
    return ok();
  }));
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].trial_number, 1);
  EXPECT_EQ(stored[1].trial_number, 2);
}

// Two stores stand for two server replicas; 12 threads run whole job lifecycles on two jobs.
// Every answered next_batch_size has its own trial number (dense per job), every answered final
// report is stored as answered, and no pruning slot (round, batch size) is dispatched twice.
TEST_F(PostgresStoreTest, TwoReplicasNeverDuplicateLoseOrPruneTwice) {
  std::unique_ptr<Store> replicas[2] = {open(3), open(3)};
  ASSERT_NE(replicas[0], nullptr);
  ASSERT_NE(replicas[1], nullptr);
  BatchSizeOptimizer bso0(*replicas[0]), bso1(*replicas[1]);
  BatchSizeOptimizer* bsos[2] = {&bso0, &bso1};
  const std::vector<std::string> jobs = {"k1", "k2"};
  for (const std::string& j : jobs) ASSERT_TRUE(bso0.register_job(spec(j)).has_value());

  struct Answered {  // the last answered report of one trial
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
TEST_F(PostgresStoreTest, ACopyIsUsedOnlyWhileNoOtherStoreChangedTheJob) {
  std::unique_ptr<Store> a = open(), b = open();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  JobRecord job{*validate_job_spec(spec("k1")), "state"};
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
      return tx.put_trial(dispatched("k1", n));
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

// Callers that read their job first hold their trial back until COMMIT; every third fails after
// writing: its held-back write never reaches the table, the others' all do.
TEST_F(PostgresStoreTest, AFailedCallersHeldBackWritesAreNeverStored) {
  std::unique_ptr<Store> store = open(2);
  ASSERT_NE(store, nullptr);
  JobRecord job{*validate_job_spec(spec("k1")), "state"};
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) { return tx.put_job(job); }));
  std::vector<std::thread> threads;
  std::atomic<int> failed{0};
  for (int n = 1; n <= 30; ++n) {
    threads.emplace_back([&, n] {
      Result<void> r = store->transact([&](StoreTransaction& tx) -> Result<void> {
        Result<std::optional<JobRecord>> j = tx.get_job("k1");
        if (!j) return fail(j.error());
        ZEUS_TRY(tx.put_trial(dispatched("k1", n)));
        if (n % 3 == 0) return fail(ErrorCode::kInvalidArgument, "refused after writing");
        return ok();
      });
      if (!r) ++failed;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failed.load(), 10);
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) -> Result<void> {
    Result<std::vector<Trial>> ts = tx.get_trials("k1");
    if (!ts) return fail(ts.error());
    EXPECT_EQ(ts->size(), 20u);
    for (const Trial& t : *ts) EXPECT_NE(t.trial_number % 3, 0) << t.trial_number;
    return ok();
  }));
}

// Doubles read back bit for bit, the special ones included (a NaN reads back as the positive
// quiet NaN: PostgreSQL keeps no NaN sign or payload).
TEST_F(PostgresStoreTest, SpecialDoublesRoundTripBitForBit) {
  std::unique_ptr<Store> store = open();
  ASSERT_NE(store, nullptr);
  JobRecord job{*validate_job_spec(spec("k1")), "state"};
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) { return tx.put_job(job); }));
  using L = std::numeric_limits<double>;
  const std::vector<double> values = {
      L::infinity(),    -L::infinity(), L::quiet_NaN(), -L::quiet_NaN(), -0.0,      L::denorm_min(),
      -L::denorm_min(), L::min() / 3,   L::max(),       L::lowest(),     1.0 / 3.0, 1e-310};
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) -> Result<void> {
    for (size_t i = 0; i < values.size(); ++i) {
      Trial t = dispatched("k1", static_cast<int>(i) + 1);
      t.time_s = t.energy_j = t.cost = t.metric = t.dispatched_unix_s = values[i];
      ZEUS_TRY(tx.put_trial(t));
    }
    return ok();
  }));
  ASSERT_TRUE(store->transact([&](StoreTransaction& tx) -> Result<void> {
    Result<std::vector<Trial>> ts = tx.get_trials("k1");
    if (!ts) return fail(ts.error());
    EXPECT_EQ(ts->size(), values.size());
    for (size_t i = 0; i < ts->size() && i < values.size(); ++i) {
      const double want = std::isnan(values[i]) ? L::quiet_NaN() : values[i];
      for (double got : {(*ts)[i].time_s, (*ts)[i].energy_j, (*ts)[i].cost, (*ts)[i].metric,
                         (*ts)[i].dispatched_unix_s}) {
        EXPECT_EQ(std::bit_cast<uint64_t>(got), std::bit_cast<uint64_t>(want)) << values[i];
      }
    }
    return ok();
  }));
}

}  // namespace
}  // namespace zeus
