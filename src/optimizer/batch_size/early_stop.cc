#include "optimizer/batch_size/early_stop.h"

#include "optimizer/batch_size/cost.h"

namespace zeus::bso {

StopDecisionCore decide_stop(const StopRule& rule, std::optional<double> min_cost,
                             const StopInput& input) {
  StopDecisionCore d;
  d.cost = zeus_cost(input.energy_j, input.time_s, rule.eta, rule.max_power_w);
  if (rule.beta && min_cost) d.cost_bound = *rule.beta * *min_cost;
  const std::optional<double>& next = input.next_epoch_cost_j;
  // The cost the bound is checked on: measured, or (upstream's simulator) epochs × epoch cost.
  const double bound_cost = rule.mode == EarlyStopMode::kKnownEpochCost && next
                                ? input.current_epoch * *next
                                : d.cost;
  d.within_bound = bound_cost <= d.cost_bound;
  d.reached_target = rule.higher_is_better_metric ? input.metric >= rule.target_metric
                                                  : input.metric <= rule.target_metric;
  const bool more_epochs = input.current_epoch < rule.max_epochs && !d.reached_target;
  d.next_epoch_over_bound = rule.mode != EarlyStopMode::kAfterCrossing && next && more_epochs &&
                            d.within_bound && bound_cost + *next > d.cost_bound;
  const bool keep_training = d.within_bound && more_epochs && !d.next_epoch_over_bound;
  d.stop_train = !keep_training;
  d.converged = d.stop_train && d.reached_target && d.within_bound;
  return d;
}

StopRule stop_rule_of(const JobSpec& spec, TrialKind kind) {
  StopRule rule;
  rule.eta = spec.eta_knob;
  rule.beta = spec.beta_knob;
  rule.max_power_w = spec.max_power_w;
  rule.target_metric = spec.target_metric;
  rule.higher_is_better_metric = spec.higher_is_better_metric;
  rule.max_epochs = spec.max_epochs;
  rule.mode = spec.early_stop;
  if (kind == TrialKind::kPruning && spec.beta_knob && spec.pruning_beta_knob) {
    rule.beta = spec.pruning_beta_knob;
  }
  return rule;
}

}  // namespace zeus::bso
