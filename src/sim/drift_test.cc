#include <gtest/gtest.h>

#include "sim/experiments_fixture.h"
#include "sim/phases.h"
#include "zeus/sim/sim_drift.h"
#include "zeus/sim/sim_report.h"

namespace zeus::sim {
namespace {

namespace fs = std::filesystem;
using testing::ExperimentsTest;

TEST_F(ExperimentsTest, DriftComparesEveryPolicyWithEachPhasesOracle) {
  DriftOptions drift;
  drift.workload = "squad";
  drift.targets = {84.0, 85.0};
  drift.phase_recurrences = 12;
  drift.window_size = 3;
  auto result = run_drift(options_, drift);
  ASSERT_TRUE(result.has_value()) << result.error().to_string();
  ASSERT_EQ(result->phases.size(), 2u);
  EXPECT_EQ(result->phases[0].oracle_batch_size, 64);
  EXPECT_EQ(result->phases[1].oracle_batch_size, 16);
  EXPECT_EQ(result->phases[1].first_recurrence, 12);
  ASSERT_EQ(result->policies.size(), 5u);
  EXPECT_EQ(result->policies[3].name, "Zeus (window 3)");
  const DriftPolicy& base = result->policies[0];
  const DriftPolicy& oracle = result->policies[4];
  EXPECT_DOUBLE_EQ(base.last_phase_energy_ratio.mean, 1.0);
  EXPECT_DOUBLE_EQ(oracle.last_phase_optimal_share.mean, 1.0);  // rebuilt at the phase change
  EXPECT_DOUBLE_EQ(base.last_phase_optimal_share.mean, 0.0);    // b0 = 32 is never optimal there
  EXPECT_GT(base.cum_regret_j.mean, oracle.cum_regret_j.mean);
  ASSERT_EQ(oracle.first_seed_batch_sizes.size(), 24u);
  EXPECT_EQ(oracle.first_seed_batch_sizes.front(), 64);
  EXPECT_EQ(oracle.first_seed_batch_sizes.back(), 16);
  ASSERT_EQ(base.mean_cum_regret_j.size(), 24u);
  EXPECT_DOUBLE_EQ(base.mean_cum_regret_j.back(), base.cum_regret_j.mean);
  ASSERT_EQ(oracle.optimal_share_curve.size(), 24u);
  for (double share : oracle.optimal_share_curve) EXPECT_NEAR(share, 1.0, 1e-12);
  for (double share : base.optimal_share_curve) EXPECT_EQ(share, 0.0);

  auto dir = write_drift_report(*result, dir_ / "drift", ReportOptions{"none"});
  ASSERT_TRUE(dir.has_value()) << dir.error().to_string();
  EXPECT_TRUE(fs::exists(dir_ / "drift" / "drift_regret.csv"));
  EXPECT_TRUE(fs::exists(dir_ / "drift" / "drift_batch_size.gp"));
}

TEST_F(ExperimentsTest, DriftRejectsAMissingTargetAndPhasesOfDifferentShape) {
  DriftOptions drift;
  drift.workload = "squad";
  drift.targets = {84.0, 99.0};
  auto missing = run_drift(options_, drift);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("no run with target metric"), std::string::npos);
  drift.targets = {84.0};
  EXPECT_FALSE(run_drift(options_, drift).has_value());

  auto a = load_workload_trace(options_.data_dir, "v100", "squad");
  ASSERT_TRUE(a.has_value());
  WorkloadTrace b = *a;
  b.batch_sizes.back() = 128;
  const Phase phases[] = {{&*a, 2}, {&b, 2}};
  auto mixed = simulate_phases(phases, PolicyKind::kZeus, SimOptions{});
  ASSERT_FALSE(mixed.has_value());
  EXPECT_NE(mixed.error().message.find("must share batch sizes"), std::string::npos);
}

}  // namespace
}  // namespace zeus::sim
