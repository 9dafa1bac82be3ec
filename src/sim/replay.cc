#include "sim/replay.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "optimizer/batch_size/early_stop.h"

namespace zeus::sim {
RunRecord replay_run_epochs(const WorkloadTrace& trace, const RunPlan& plan, int target_epoch, double eta) {
  ZEUS_CHECK(plan.b >= 0 && plan.b < trace.num_batch_sizes(), "batch-size index out of range");
  ZEUS_CHECK(plan.p >= 0 && plan.p < trace.num_power_limits(), "power-limit index out of range");
  RunRecord run;
  run.b = plan.b;
  run.p = plan.p;
  run.profiled = plan.profile_power;
  const double epoch_time_s = trace.time_per_epoch_s(plan.b, plan.p);
  const double epoch_energy_j = trace.energy_per_epoch_j(plan.b, plan.p);
  const int max_epochs = trace.workload.max_epochs;
  // The batch-size optimizer's report rule decides after every epoch; the replayed metric is 1
  // at the path's target epoch and 0 before it.
  bso::StopRule rule;
  rule.eta = eta;
  rule.beta = plan.beta;
  rule.max_power_w = trace.max_power_w;
  rule.target_metric = 0.5;
  rule.higher_is_better_metric = true;
  rule.max_epochs = max_epochs;
  for (int epoch = 1; epoch <= max_epochs; ++epoch) {
    double time_s = epoch_time_s;
    double energy_j = epoch_energy_j;
    if (epoch == 1 && plan.profile_power) {
      time_s = 0.0;
      energy_j = 0.0;
      const int limits = trace.num_power_limits();
      for (int p = 0; p < limits; ++p) {
        time_s += trace.time_per_epoch_s(plan.b, p);
        energy_j += trace.energy_per_epoch_j(plan.b, p);
      }
      time_s /= limits;
      energy_j /= limits;
    }
    run.time_s += time_s;
    run.energy_j += energy_j;
    run.epochs = epoch;
    bso::StopInput input;
    input.time_s = run.time_s;
    input.energy_j = run.energy_j;
    input.metric = epoch == target_epoch ? 1.0 : 0.0;
    input.current_epoch = epoch;
    const bso::StopDecisionCore decision = bso::decide_stop(rule, plan.min_cost_j, input);
    run.cost_j = decision.cost;
    if (decision.stop_train) {
      run.reached = decision.converged;
      run.early_stopped = !decision.within_bound;
      return run;
    }
  }
  ZEUS_CHECK(false, "the stop rule must end a run by max_epochs");
  return run;
}

}  // namespace zeus::sim
