#include "sim/replay.h"

#include "optimizer/batch_size/cost.h"
#include "optimizer/batch_size/next_epoch_cost.h"

namespace zeus::sim {

EpochJudge::EpochJudge(const WorkloadTrace& trace, const RunPlan& plan, int target_epoch, double eta)
    : min_cost_j_(plan.min_cost_j),
      prior_epoch_cost_j_(plan.prior_epoch_cost_j),
      known_epoch_cost_j_(trace.epoch_cost(plan.b, plan.p, eta)),
      target_epoch_(target_epoch) {
  rule_.mode = plan.early_stop;
  rule_.eta = eta;
  rule_.beta = plan.beta;
  rule_.max_power_w = trace.max_power_w;
  rule_.target_metric = 0.5;
  rule_.higher_is_better_metric = true;
  rule_.max_epochs = trace.workload.max_epochs;
}

bool EpochJudge::skips_run(RunRecord& run) const {
  if (rule_.mode != EarlyStopMode::kKnownEpochCost) return false;
  bso::StopInput input;
  input.next_epoch_cost_j = known_epoch_cost_j_;
  if (!bso::decide_stop(rule_, min_cost_j_, input).stop_train) return false;
  run.early_stopped = true;
  return true;
}

bool EpochJudge::end_epoch(RunRecord& run, int epoch, double time_s, double energy_j) const {
  bso::EpochCostEvidence evidence;
  evidence.previous_cost_j = run.cost_j;
  evidence.previous_epochs = run.epochs;
  evidence.prior_epoch_cost_j = prior_epoch_cost_j_;
  run.time_s += time_s;
  run.energy_j += energy_j;
  run.epochs = epoch;
  evidence.cost_j = bso::zeus_cost(run.energy_j, run.time_s, rule_.eta, rule_.max_power_w);
  evidence.epochs = epoch;
  bso::StopInput input;
  input.time_s = run.time_s;
  input.energy_j = run.energy_j;
  input.metric = epoch == target_epoch_ ? 1.0 : 0.0;
  input.current_epoch = epoch;
  input.next_epoch_cost_j = rule_.mode == EarlyStopMode::kKnownEpochCost
                                ? std::optional<double>(known_epoch_cost_j_)
                                : bso::expected_next_epoch_cost(evidence);
  const bso::StopDecisionCore decision = bso::decide_stop(rule_, min_cost_j_, input);
  run.cost_j = decision.cost;
  if (!decision.stop_train) return false;
  run.reached = decision.converged;
  run.early_stopped = !decision.within_bound || decision.next_epoch_over_bound;
  return true;
}

RunRecord replay_run_epochs(const WorkloadTrace& trace, const RunPlan& plan, int target_epoch, double eta) {
  ZEUS_CHECK(plan.b >= 0 && plan.b < trace.num_batch_sizes(), "batch-size index out of range");
  ZEUS_CHECK(plan.p >= 0 && plan.p < trace.num_power_limits(), "power-limit index out of range");
  RunRecord run;
  run.b = plan.b;
  run.p = plan.p;
  run.profiled = plan.profile_power;
  const EpochJudge judge(trace, plan, target_epoch, eta);
  if (judge.skips_run(run)) return run;
  for (int epoch = 1; epoch <= trace.workload.max_epochs; ++epoch) {
    double time_s = trace.time_per_epoch_s(plan.b, plan.p);
    double energy_j = trace.energy_per_epoch_j(plan.b, plan.p);
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
    if (judge.end_epoch(run, epoch, time_s, energy_j)) return run;
  }
  ZEUS_CHECK(false, "the stop rule must end a run by max_epochs");
  return run;
}

}  // namespace zeus::sim
