#include "perseus/planner/pd_step.h"

#include <algorithm>
#include <cmath>

#include "perseus/planner/python_float.h"

namespace zeus::pfo {
namespace {

constexpr double kTolerance = 1e-6;     // the reference's FP_ERROR
constexpr double kUnbounded = 10000.0;  // the reference's "infinite" capacity, in joules

double round_down_to_tolerance(double x) { return python_floordiv(x, kTolerance) * kTolerance; }

}  // namespace

StepOperation step_operation(int64_t min_quant_time, int64_t max_quant_time,
                             const std::function<double(int64_t)>& cost) {
  StepOperation op;
  op.min_quant_time = min_quant_time;
  op.max_quant_time = max_quant_time;
  op.first = op.min_quant_time - 1;
  for (int64_t d = op.first; d <= op.max_quant_time + 1; ++d) op.costs.push_back(cost(d));
  // The arc's flow bounds at duration d: lower = the saving of slowing down, upper = the cost of
  // speeding up (unbounded where the operation cannot move that way).
  for (int64_t d = op.min_quant_time; d <= op.max_quant_time; ++d) {
    double lower = 0.0;
    double upper = kUnbounded;
    if (op.min_quant_time == op.max_quant_time) {
      // Fixed: neither faster nor slower.
    } else if (d - 1 < op.min_quant_time) {
      lower = std::abs(op.cost(d) - op.cost(d + 1));
    } else if (d + 1 > op.max_quant_time) {
      upper = std::abs(op.cost(d - 1) - op.cost(d));
    } else {
      lower = std::abs(op.cost(d) - op.cost(d + 1));
      upper = std::abs(op.cost(d - 1) - op.cost(d)) + kTolerance;
    }
    op.lower_bounds.push_back(round_down_to_tolerance(lower));
    op.upper_bounds.push_back(round_down_to_tolerance(upper));
  }
  return op;
}

StepOperation step_operation(const OperationModel& model) {
  return step_operation(model.min_quant_time(), model.max_quant_time(),
                        [&model](int64_t d) { return model.cost(d); });
}

StepResult PhillipsDessoukyStep::run(const PipelineDag& dag, const std::vector<int>& critical,
                                     const std::vector<const StepOperation*>& operation_of,
                                     std::vector<int64_t>& durations) {
  compact_.resize(static_cast<std::size_t>(dag.num_nodes()), -1);
  arc_flow_.resize(dag.arcs().size(), 0.0);
  for (int node : touched_) compact_[static_cast<std::size_t>(node)] = -1;
  touched_.clear();
  edges_.clear();
  auto id_of = [&](int node) {
    int& id = compact_[static_cast<std::size_t>(node)];
    if (id < 0) {
      id = static_cast<int>(touched_.size());
      touched_.push_back(node);
    }
    return id;
  };
  id_of(dag.source());
  id_of(dag.sink());
  // A dummy arc: no cost, any flow.
  static const double dummy_lower = round_down_to_tolerance(0.0);
  static const double dummy_upper = round_down_to_tolerance(kUnbounded);
  for (int a : critical) {
    const Arc& arc = dag.arcs()[static_cast<std::size_t>(a)];
    double lower = dummy_lower;
    double upper = dummy_upper;
    if (arc.instruction >= 0) {
      const StepOperation& op = *operation_of[static_cast<std::size_t>(arc.instruction)];
      const int64_t d = durations[static_cast<std::size_t>(arc.instruction)];
      lower = op.lower_bound(d);
      upper = op.upper_bound(d);
    }
    edges_.push_back(
        {id_of(arc.tail), id_of(arc.head), lower, upper, arc_flow_[static_cast<std::size_t>(a)]});
  }
  StepResult result;
  auto source_side = min_cut_.solve(static_cast<int>(touched_.size()), edges_, 0, 1);
  if (!source_side) {
    result.stop = StopReason::kNoFeasibleFlow;
    return result;
  }
  // The next step starts from this flow (only a speed-up: the cut does not depend on it).
  std::fill(arc_flow_.begin(), arc_flow_.end(), 0.0);
  for (std::size_t e = 0; e < edges_.size(); ++e)
    arc_flow_[static_cast<std::size_t>(critical[e])] = edges_[e].flow;
  std::vector<int> speed_up;
  std::vector<int> slow_down;
  for (std::size_t e = 0; e < edges_.size(); ++e) {
    const bool from_s = (*source_side)[static_cast<std::size_t>(edges_[e].from)] != 0;
    const bool to_s = (*source_side)[static_cast<std::size_t>(edges_[e].to)] != 0;
    const int inst = dag.arcs()[static_cast<std::size_t>(critical[e])].instruction;
    if (from_s && !to_s) {
      if (inst < 0) {
        result.stop = StopReason::kCannotSpeedUp;  // a dummy arc cannot be shortened
        return result;
      }
      speed_up.push_back(inst);
    }
    if (!from_s && to_s && inst >= 0) slow_down.push_back(inst);  // dummies slow down for free
  }
  if (speed_up.empty()) {
    result.stop = StopReason::kNoCostChange;
    return result;
  }
  double change = 0.0;
  for (int inst : speed_up) {
    const StepOperation& op = *operation_of[static_cast<std::size_t>(inst)];
    const int64_t d = durations[static_cast<std::size_t>(inst)];
    if (d - 1 < op.min_quant_time) {
      result.stop = StopReason::kCannotSpeedUp;
      return result;
    }
    change += std::abs(op.cost(d - 1) - op.cost(d));
  }
  for (int inst : slow_down) {
    const StepOperation& op = *operation_of[static_cast<std::size_t>(inst)];
    const int64_t d = durations[static_cast<std::size_t>(inst)];
    if (d + 1 > op.max_quant_time) {
      result.stop = StopReason::kCannotSlowDown;
      return result;
    }
    change -= std::abs(op.cost(d) - op.cost(d + 1));
  }
  result.cost_change = change;
  if (std::abs(change) < kTolerance) {
    result.stop = StopReason::kNoCostChange;
    return result;
  }
  for (int inst : speed_up) --durations[static_cast<std::size_t>(inst)];
  for (int inst : slow_down) ++durations[static_cast<std::size_t>(inst)];
  result.sped_up = std::move(speed_up);
  result.slowed_down = std::move(slow_down);
  return result;
}

}  // namespace zeus::pfo
