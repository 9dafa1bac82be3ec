// The step fidelity against the closed form: the real PowerLimitOptimizer and EnergyMonitor on a
// ReplayGpu must give the costs the epoch fidelity computes.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "sim/replay.h"
#include "sim/sim_test_util.h"
#include "zeus/sim/simulator.h"

namespace zeus::sim {
namespace {

std::filesystem::path replay_data_dir() {
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "data";
}

TEST(StepFidelity, AFixedConfigurationCostsExactlyTheClosedForm) {
  const WorkloadTrace trace = testing::toy_trace();
  for (int p = 0; p < trace.num_power_limits(); ++p) {
    RunPlan plan;
    plan.b = 1;
    plan.p = p;
    const RunRecord epochs = replay_run_epochs(trace, plan, 4, 0.5);
    const RunRecord steps = replay_run_steps(trace, plan, 4, 0.5, 0);
    EXPECT_EQ(steps.epochs, 4);
    EXPECT_TRUE(steps.reached);
    EXPECT_EQ(steps.p, p);
    EXPECT_NEAR(steps.time_s, epochs.time_s, 1e-9 * epochs.time_s);
    EXPECT_NEAR(steps.energy_j, epochs.energy_j, 1e-6 * epochs.energy_j);  // the counter counts mJ
    EXPECT_NEAR(steps.cost_j, epochs.cost_j, 1e-6 * epochs.cost_j);
  }
}

TEST(StepFidelity, TheRealProfilerPicksTheClosedFormsLimitInTheFirstEpoch) {
  const WorkloadTrace trace = testing::toy_trace();
  RunPlan plan;
  plan.b = 2;           // b=32: ZeusCost picks 100 W (1200 J/epoch < 1250 J/epoch)
  plan.p = 0;
  plan.profile_power = true;
  const RunRecord epochs = replay_run_epochs(trace, plan, 2, 0.5);
  const RunRecord steps = replay_run_steps(trace, plan, 2, 0.5, 0);
  EXPECT_TRUE(steps.profiled);
  EXPECT_EQ(steps.p, 0);
  EXPECT_EQ(steps.epochs, 2);
  // Epoch 1: 50 steps per limit plus one at the optimum, against the mean over limits.
  EXPECT_NEAR(steps.cost_j, epochs.cost_j, 0.01 * epochs.cost_j);
  EXPECT_NE(steps.cost_j, epochs.cost_j);
  // Too few steps per epoch: the profiler is interrupted and finishes in a later epoch.
  const RunRecord short_epochs = replay_run_steps(trace, plan, 3, 0.5, 60);
  EXPECT_EQ(short_epochs.p, 0);
}

TEST(StepFidelity, BothFidelitiesAgreeWithinOnePercentOnEveryWorkload) {
  auto traces = load_workload_traces(replay_data_dir(), "v100", {});
  ASSERT_TRUE(traces.has_value()) << traces.error().to_string();
  // Ours (predictive early stop, round-2 skip), Zeus 0.16's stop, and the original's rules.
  for (const char* rules : {"zeus", "zeus,early_stop=after-crossing", "upstream"}) {
    for (const WorkloadTrace& trace : *traces) {
      double epoch_cost_j = 0.0, step_cost_j = 0.0;
      for (uint64_t seed = 1; seed <= 2; ++seed) {
        SimOptions options;
        options.seed = seed;
        options.recurrences = 20;
        options.zeus = *parse_zeus_rules(rules);
        auto epoch = simulate(trace, PolicyKind::kZeus, options);
        options.fidelity = Fidelity::kStep;
        auto step = simulate(trace, PolicyKind::kZeus, options);
        ASSERT_TRUE(epoch && step);
        epoch_cost_j += epoch->total_cost_j();
        step_cost_j += step->total_cost_j();
      }
      EXPECT_NEAR(step_cost_j / epoch_cost_j, 1.0, 0.01) << trace.workload.name << " " << rules;
    }
  }
}

}  // namespace
}  // namespace zeus::sim
