// Replay of one run: the closed form per epoch (paper §6.1) and the per-iteration replay on a
// ReplayGpu (step fidelity), sharing the batch-size optimizer's report rule.
#pragma once

#include "optimizer/batch_size/early_stop.h"
#include "sim/policy.h"
#include "zeus/sim/sim_trace.h"

namespace zeus::sim {

// The batch-size optimizer's report rule (bso::decide_stop in the plan's early-stop mode, with
// bso::expected_next_epoch_cost from the run's epochs so far, as the live optimizer computes it
// from a trial's reports) applied after every epoch of a run; the replayed metric is 1 at the
// path's target epoch and 0 before it. In kKnownEpochCost mode (upstream's simulator) the next
// epoch's cost is the steady epoch cost of (plan.b, plan.p), known in advance.
class EpochJudge {
 public:
  EpochJudge(const WorkloadTrace& trace, const RunPlan& plan, int target_epoch, double eta);
  // kKnownEpochCost only: true when even the first epoch would cross the bound, so the run is not
  // started (upstream's simulator); then run.early_stopped is set.
  bool skips_run(RunRecord& run) const;
  // Adds one epoch's time and energy to `run`; true when the run ends after it (then
  // run.reached and run.early_stopped are set). run.cost_j is updated either way.
  bool end_epoch(RunRecord& run, int epoch, double time_s, double energy_j) const;

 private:
  bso::StopRule rule_;
  std::optional<double> min_cost_j_;
  std::optional<double> prior_epoch_cost_j_;
  double known_epoch_cost_j_;
  int target_epoch_;
};

// Runs `plan` on the training path whose target epoch is `target_epoch` (<= 0: never reached).
// Epoch 1 of a profiling run is sliced evenly across every power limit (its time and energy are
// the means over the limits); the other epochs run at plan.p. After each epoch the run stops when
// it reached the target, when the early-stop rule (plan.early_stop against plan.beta x
// plan.min_cost_j) stops it (then it failed: early-stopped), or at max_epochs (failed).
RunRecord replay_run_epochs(const WorkloadTrace& trace, const RunPlan& plan, int target_epoch, double eta);

// The same run iteration by iteration: a ReplayGpu on a FakeClock draws the trace's average
// power at its current limit; each step lasts time_per_epoch / steps_per_epoch at that limit.
// A profiling run creates the real PowerLimitOptimizer (ZeusCost(eta) selector, candidates =
// the trace's limits, 1 wait + 10 warm-up + 40 profiled steps per limit) and calls its step and
// epoch callbacks; the other runs set plan.p. The EnergyMonitor measures every epoch. run.p is
// the limit the run ended at (the profiler's choice). steps_per_epoch <= 0: 50 x |P| + 1, the
// least that lets the profiler finish within the first epoch.
RunRecord replay_run_steps(const WorkloadTrace& trace, const RunPlan& plan, int target_epoch, double eta,
                           int steps_per_epoch);

// The default steps per epoch of the step fidelity for `trace` (see above).
int default_steps_per_epoch(const WorkloadTrace& trace);

}  // namespace zeus::sim
