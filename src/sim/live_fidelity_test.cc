// The simulator against the live batch-size optimizer, step for step: every run the simulated
// Zeus policy makes is replayed through BatchSizeOptimizer (register, next_batch_size, one report
// per epoch over a memory store) with the same spec and bandit seed; the live optimizer must hand
// out the same batch size and stop each run at the same epoch with the same outcome and cost.
#include <gtest/gtest.h>

#include <filesystem>

#include "sim/policy.h"
#include "zeus/optimizer/batch_size_optimizer.h"
#include "zeus/optimizer/bso_store.h"
#include "zeus/sim/simulator.h"

namespace zeus::sim {
namespace {

std::filesystem::path fidelity_data_dir() {
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "data";
}

// Replays `history` (a Zeus simulation of `trace` under `options`) through the live optimizer.
void expect_live_optimizer_agrees(const WorkloadTrace& trace, const SimOptions& options, const History& history) {
  std::unique_ptr<Store> store = make_memory_store();
  BatchSizeOptimizer bso(*store);
  JobSpec spec = zeus_job_spec(trace, options);
  spec.job_id_prefix = "sim";
  spec.mab_seed = static_cast<int64_t>(zeus_bandit_seed(options.seed));
  auto registered = bso.register_job(spec);
  ASSERT_TRUE(registered.has_value()) << registered.error().to_string();
  const int limits = trace.num_power_limits();
  for (std::size_t i = 0; i < history.runs.size(); ++i) {
    const RunRecord& run = history.runs[i];
    auto trial = bso.next_batch_size("sim");
    ASSERT_TRUE(trial.has_value()) << trial.error().to_string();
    ASSERT_EQ(trial->batch_size, trace.batch_sizes[static_cast<std::size_t>(run.b)])
        << trace.workload.name << " run " << i;
    double time_s = 0.0, energy_j = 0.0;
    for (int epoch = 1;; ++epoch) {
      ASSERT_LE(epoch, run.epochs) << trace.workload.name << " run " << i << ": the live optimizer trains longer";
      if (epoch == 1 && run.profiled) {
        for (int p = 0; p < limits; ++p) {
          time_s += trace.time_per_epoch_s(run.b, p) / limits;
          energy_j += trace.energy_per_epoch_j(run.b, p) / limits;
        }
      } else {
        time_s += trace.time_per_epoch_s(run.b, run.p);
        energy_j += trace.energy_per_epoch_j(run.b, run.p);
      }
      TrialReport report{"sim", trial->batch_size, trial->trial_number, time_s, energy_j,
                         run.reached && epoch == run.epochs ? 1.0 : 0.0, epoch};
      auto decision = bso.report(report);
      ASSERT_TRUE(decision.has_value()) << decision.error().to_string();
      if (!decision->stop_train) continue;
      EXPECT_EQ(epoch, run.epochs) << trace.workload.name << " run " << i << ": " << decision->message;
      EXPECT_EQ(decision->converged, run.reached) << trace.workload.name << " run " << i;
      EXPECT_NEAR(time_s, run.time_s, 1e-9 * run.time_s);
      break;
    }
  }
}

TEST(LiveFidelity, TheLiveOptimizerMakesTheSimulatorsDecisionsOnEveryWorkload) {
  auto traces = load_workload_traces(fidelity_data_dir(), "v100", {});
  ASSERT_TRUE(traces.has_value()) << traces.error().to_string();
  for (const char* rules : {"zeus", "zeus,early_stop=after-crossing,prune_factor=off,stop_after_rises=0",
                            "zeus,mab_min_relative_sd=0.1,pruning_beta=1.5"}) {
    for (const WorkloadTrace& trace : *traces) {
      for (uint64_t seed = 1; seed <= 2; ++seed) {
        SimOptions options;
        options.seed = seed;
        options.recurrences = 40;
        options.zeus = *parse_zeus_rules(rules);
        auto history = simulate(trace, PolicyKind::kZeus, options);
        ASSERT_TRUE(history.has_value());
        expect_live_optimizer_agrees(trace, options, *history);
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

}  // namespace
}  // namespace zeus::sim
