// Statistical behaviour of the whole batch-size optimizer (driver + pure cores + MemoryStore) on
// synthetic recurring jobs with known mean costs and Gaussian noise: convergence to the best arm,
// sub-linear cumulative regret, and recovery from data drift with and without a window.
// The curves are printed and written as CSV files into the build directory.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "optimizer/batch_size/rng.h"
#include "zeus/optimizer/batch_size_optimizer.h"

namespace zeus {
namespace {

using CostTable = std::map<int, double>;  // batch size -> mean cost (J)

// The stationary job: gaps of 6–30 J against a noise of 8 J, so the bandit has to learn.
const CostTable kStationary = {{8, 120}, {16, 100}, {32, 106}, {64, 112}, {128, 130}};
const CostTable kPhase1 = {{8, 130}, {16, 100}, {32, 115}, {64, 125}, {128, 150}};
// Data drift: the former best (16) becomes expensive and the runner-up (32) becomes the best.
const CostTable kPhase2 = {{8, 150}, {16, 140}, {32, 95}, {64, 120}, {128, 160}};
constexpr double kStationaryNoiseJ = 8.0;
constexpr double kDriftNoiseJ = 4.0;

JobSpec synthetic_job(int64_t seed, int window_size) {
  JobSpec s;
  s.job_id = "syn-" + std::to_string(seed);
  s.job_id_prefix = "syn-";
  s.batch_sizes = {8, 16, 32, 64, 128};
  s.default_batch_size = 32;
  s.eta_knob = 1.0;  // cost = energy_j
  s.max_power_w = 300;
  s.target_metric = 0.9;
  s.window_size = window_size;
  s.mab_seed = seed;
  return s;
}

// Runs `recurrences` recurrences of one seeded job; returns the batch size of each. The cost
// table switches from phase1 to phase2 at recurrence `change_at`.
std::vector<int> run_job(int64_t seed, int window_size, int recurrences, int change_at,
                         const CostTable& phase1, const CostTable& phase2, double noise_j) {
  std::unique_ptr<Store> store = make_memory_store();
  BatchSizeOptimizer bso(*store, [] { return uint64_t{1}; });
  const JobSpec spec = synthetic_job(seed, window_size);
  EXPECT_TRUE(bso.register_job(spec).has_value());
  bso::Rng noise(static_cast<uint64_t>(seed) * 7919 + 13);
  std::vector<int> picks;
  for (int r = 0; r < recurrences; ++r) {
    Result<TrialId> t = bso.next_batch_size(*spec.job_id);
    EXPECT_TRUE(t.has_value());
    if (!t) break;
    const CostTable& table = r < change_at ? phase1 : phase2;
    const double cost = std::max(1.0, table.at(t->batch_size) + noise.normal(0.0, noise_j));
    Result<ReportDecision> d =
        bso.report({*spec.job_id, t->batch_size, t->trial_number, 10.0, cost, 0.95, 5});
    EXPECT_TRUE(d.has_value());
    picks.push_back(t->batch_size);
  }
  return picks;
}

std::string csv_path(const std::string& name) {
  return std::string(ZEUS_BINARY_DIR) + "/" + name;
}

TEST(BanditStatisticsTest, FindsTheBestArmWithSublinearRegret) {
  constexpr int kSeeds = 100;
  constexpr int kRecurrences = 100;
  const int best = 16;
  std::vector<double> cumulative(kRecurrences, 0.0);  // mean over seeds
  std::vector<double> best_share(kRecurrences, 0.0);
  int best_in_last_20 = 0;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    const std::vector<int> picks = run_job(seed, 0, kRecurrences, kRecurrences, kStationary, kStationary, kStationaryNoiseJ);
    ASSERT_EQ(picks.size(), static_cast<size_t>(kRecurrences));
    double regret = 0;
    for (int r = 0; r < kRecurrences; ++r) {
      regret += kStationary.at(picks[r]) - kStationary.at(best);
      cumulative[r] += regret / kSeeds;
      best_share[r] += picks[r] == best ? 1.0 / kSeeds : 0.0;
      if (r >= kRecurrences - 20 && picks[r] == best) ++best_in_last_20;
    }
  }
  const double share_last_20 = best_in_last_20 / (20.0 * kSeeds);
  std::ofstream csv(csv_path("bso_regret.csv"));
  csv << "recurrence,mean_cumulative_regret_j,share_best_arm\n";
  std::printf("recurrence  mean cumulative regret (J)  share picking the best arm\n");
  for (int r = 0; r < kRecurrences; ++r) {
    csv << r + 1 << "," << cumulative[r] << "," << best_share[r] << "\n";
    if ((r + 1) % 10 == 0) std::printf("%10d  %26.1f  %26.2f\n", r + 1, cumulative[r], best_share[r]);
  }
  std::printf("best arm in the last 20 recurrences: %.1f%% (CSV: %s)\n", 100 * share_last_20,
              csv_path("bso_regret.csv").c_str());
  EXPECT_GE(share_last_20, 0.90);
  // Sub-linear: each quarter of the recurrences adds less regret than the one before (the first
  // holds the pruning explorations), so the mean regret per recurrence keeps falling.
  constexpr int kQuarter = kRecurrences / 4;
  std::vector<double> per_quarter;
  for (int q = 0; q < 4; ++q) {
    const double start = q == 0 ? 0.0 : cumulative[q * kQuarter - 1];
    per_quarter.push_back(cumulative[(q + 1) * kQuarter - 1] - start);
    std::printf("quarter %d adds %.1f J of regret\n", q + 1, per_quarter.back());
  }
  for (int q = 1; q < 4; ++q) EXPECT_LT(per_quarter[q], per_quarter[q - 1]) << "quarter " << q;
  EXPECT_LT(per_quarter[3], per_quarter[0] / 4);
}

struct DriftSummary {
  double mean_delay = 0;    // recurrences from the change until 5 picks in a row of the new best
  double median_delay = 0;
  double share_new_best_last_20 = 0;
};

DriftSummary drift(int window_size, int seeds, std::vector<double>* share_curve) {
  constexpr int kChange = 60, kRecurrences = 120, kRun = 5;
  const int new_best = 32;
  std::vector<double> delays;
  int last_20 = 0;
  share_curve->assign(kRecurrences, 0.0);
  for (int seed = 1; seed <= seeds; ++seed) {
    const std::vector<int> picks = run_job(seed, window_size, kRecurrences, kChange, kPhase1, kPhase2, kDriftNoiseJ);
    EXPECT_EQ(picks.size(), static_cast<size_t>(kRecurrences));
    if (picks.size() != static_cast<size_t>(kRecurrences)) return {};
    double delay = kRecurrences - kChange;  // never settled
    for (int r = kChange; r + kRun <= kRecurrences; ++r) {
      if (std::all_of(picks.begin() + r, picks.begin() + r + kRun,
                      [&](int b) { return b == new_best; })) {
        delay = r - kChange;
        break;
      }
    }
    delays.push_back(delay);
    for (int r = 0; r < kRecurrences; ++r) {
      (*share_curve)[r] += picks[r] == new_best ? 1.0 / seeds : 0.0;
      if (r >= kRecurrences - 20 && picks[r] == new_best) ++last_20;
    }
  }
  DriftSummary s;
  s.mean_delay = std::accumulate(delays.begin(), delays.end(), 0.0) / delays.size();
  std::sort(delays.begin(), delays.end());
  s.median_delay = delays[delays.size() / 2];
  s.share_new_best_last_20 = last_20 / (20.0 * seeds);
  return s;
}

TEST(BanditStatisticsTest, WindowFollowsDataDriftFasterThanAllHistory) {
  constexpr int kSeeds = 50;
  std::vector<double> windowed_curve, unwindowed_curve;
  const DriftSummary windowed = drift(10, kSeeds, &windowed_curve);
  const DriftSummary unwindowed = drift(0, kSeeds, &unwindowed_curve);
  std::ofstream csv(csv_path("bso_drift.csv"));
  csv << "recurrence,share_new_best_window_10,share_new_best_no_window\n";
  for (size_t r = 0; r < windowed_curve.size(); ++r) {
    csv << r + 1 << "," << windowed_curve[r] << "," << unwindowed_curve[r] << "\n";
  }
  std::printf("drift at recurrence 60 (best 16 -> 32), %d seeds, delay = recurrences until 5 "
              "picks in a row of the new best:\n", kSeeds);
  std::printf("  window 10 : mean delay %5.1f, median %5.1f, new best in last 20: %5.1f%%\n",
              windowed.mean_delay, windowed.median_delay, 100 * windowed.share_new_best_last_20);
  std::printf("  no window : mean delay %5.1f, median %5.1f, new best in last 20: %5.1f%%\n",
              unwindowed.mean_delay, unwindowed.median_delay,
              100 * unwindowed.share_new_best_last_20);
  std::printf("  CSV: %s\n", csv_path("bso_drift.csv").c_str());
  // With a window of 10 the stale costs of the old best leave its window after 10 pulls.
  EXPECT_LE(windowed.median_delay, 20);
  EXPECT_GE(windowed.share_new_best_last_20, 0.85);
  EXPECT_LT(windowed.mean_delay, unwindowed.mean_delay);
}

}  // namespace
}  // namespace zeus
