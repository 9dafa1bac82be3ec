#include "optimizer/batch_size/early_stop.h"

#include "optimizer/batch_size/cost.h"

namespace zeus::bso {

StopDecisionCore decide_stop(const StopRule& rule, std::optional<double> min_cost,
                             const StopInput& input) {
  StopDecisionCore d;
  d.cost = zeus_cost(input.energy_j, input.time_s, rule.eta, rule.max_power_w);
  if (rule.beta && min_cost) d.cost_bound = *rule.beta * *min_cost;
  d.within_bound = d.cost <= d.cost_bound;
  d.reached_target = rule.higher_is_better_metric ? input.metric >= rule.target_metric
                                                  : input.metric <= rule.target_metric;
  const bool keep_training =
      d.within_bound && input.current_epoch < rule.max_epochs && !d.reached_target;
  d.stop_train = !keep_training;
  d.converged = d.stop_train && d.reached_target && d.within_bound;
  return d;
}

}  // namespace zeus::bso
