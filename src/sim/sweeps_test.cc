#include <gtest/gtest.h>

#include "sim/experiments_fixture.h"
#include "zeus/sim/sim_report.h"
#include "zeus/sim/sim_sweeps.h"

namespace zeus::sim {
namespace {

namespace fs = std::filesystem;
using testing::ExperimentsTest;

const PolicyHeadline& zeus_of(const HeadlineResult& r) { return r.workloads[0].policies[2]; }

TEST_F(ExperimentsTest, SweepCellsAreTheHeadlineRunsOfEachVariant) {
  auto sweep = run_beta_sweep(options_, {2.0, 4.0});
  ASSERT_TRUE(sweep.has_value()) << sweep.error().to_string();
  EXPECT_EQ(sweep->experiment, "beta-sweep");
  ASSERT_EQ(sweep->variants, (std::vector<std::string>{"2.00", "4.00"}));
  ASSERT_EQ(sweep->workloads.size(), 1u);
  ASSERT_EQ(sweep->workloads[0].cells.size(), 2u);
  for (double beta : {2.0, 4.0}) {
    ExperimentOptions options = options_;
    options.sim.beta = beta;
    auto headline = run_headline(options);
    ASSERT_TRUE(headline.has_value());
    const SweepCell& cell = sweep->workloads[0].cells[beta == 2.0 ? 0 : 1];
    EXPECT_EQ(cell.value, beta);
    EXPECT_EQ(cell.cum_energy_ratio.mean, zeus_of(*headline).cum_energy_ratio.mean);
    EXPECT_EQ(cell.cum_regret_j.mean, zeus_of(*headline).cum_regret_j.mean);
    EXPECT_EQ(cell.grid_cum_regret_j.mean, headline->workloads[0].policies[1].cum_regret_j.mean);
    EXPECT_DOUBLE_EQ(cell.last5_eta_j.mean, zeus_of(*headline).last5_energy_j.mean / 5);
  }
}

TEST_F(ExperimentsTest, EtaSweepMovesTheOracleAlongTheTradeOff) {
  auto sweep = run_eta_sweep(options_, {0.0, 1.0});
  ASSERT_TRUE(sweep.has_value()) << sweep.error().to_string();
  const SweepCell& time_first = sweep->workloads[0].cells[0];
  const SweepCell& energy_first = sweep->workloads[0].cells[1];
  // eta = 1 minimises energy, eta = 0 time: the Oracle trades one for the other.
  EXPECT_LE(energy_first.oracle_eta_j, time_first.oracle_eta_j);
  EXPECT_LE(time_first.oracle_tta_s, energy_first.oracle_tta_s);
  EXPECT_LT(energy_first.oracle_eta_j, time_first.oracle_eta_j + time_first.oracle_tta_s);  // not degenerate
  auto dir = write_sweep_report(*sweep, dir_ / "eta", ReportOptions{"none"});
  ASSERT_TRUE(dir.has_value()) << dir.error().to_string();
  EXPECT_TRUE(fs::exists(dir_ / "eta" / "tradeoff_squad.csv"));
  EXPECT_TRUE(fs::exists(dir_ / "eta" / "eta-sweep.csv"));
  EXPECT_NE(read(dir_ / "eta" / "cum_energy.csv").find("eta,squad"), std::string::npos);
}

TEST_F(ExperimentsTest, AblationWithoutJitStaysAtTheMaximumLimit) {
  auto sweep = run_ablation(options_);
  ASSERT_TRUE(sweep.has_value()) << sweep.error().to_string();
  ASSERT_EQ(sweep->variants.size(), 5u);
  EXPECT_EQ(sweep->variants[0], "Zeus");
  const std::vector<SweepCell>& cells = sweep->workloads[0].cells;
  EXPECT_DOUBLE_EQ(cells[3].converged_power_limit_w, 250.0);  // no JIT profiling
  EXPECT_DOUBLE_EQ(cells[4].converged_power_limit_w, 250.0);
  // Named variants are drawn as bars with one series per variant.
  auto dir = write_sweep_report(*sweep, dir_ / "ablation", ReportOptions{"none"});
  ASSERT_TRUE(dir.has_value());
  EXPECT_NE(read(dir_ / "ablation" / "cum_regret.csv").find("workload,Zeus,no early stop"), std::string::npos);
}

TEST_F(ExperimentsTest, GpusSweepReadsEachGpusTraceAndRejectsUnknownOnes) {
  fs::copy_file(dir_ / "data" / "summary_power_v100.csv", dir_ / "data" / "summary_power_a40.csv");
  auto sweep = run_gpus(options_, {"v100", "a40"});
  ASSERT_TRUE(sweep.has_value()) << sweep.error().to_string();
  EXPECT_EQ(sweep->gpu, "v100,a40");
  const std::vector<SweepCell>& cells = sweep->workloads[0].cells;
  EXPECT_EQ(cells[0].cum_energy_ratio.mean, cells[1].cum_energy_ratio.mean);  // same trace, same numbers
  auto bad = run_gpus(options_, {"v100", "h100"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("unknown GPU 'h100'"), std::string::npos);
  auto bad_beta = run_beta_sweep(options_, {2.0, 0.5});
  ASSERT_FALSE(bad_beta.has_value());
  EXPECT_NE(bad_beta.error().message.find("must be >= 1"), std::string::npos);
  auto bad_eta = run_eta_sweep(options_, {1.5});
  ASSERT_FALSE(bad_eta.has_value());
  EXPECT_NE(bad_eta.error().message.find("eta must be in [0, 1]"), std::string::npos);
}

}  // namespace
}  // namespace zeus::sim
