// One Phillips-Dessouky step (docs/perseus.md): shorten the critical path of an activity-on-arc
// DAG by one unit at the least cost. Critical arcs get flow bounds from the cost slopes
// (lower = saving of slowing down, upper = cost of speeding up, INF = 10000 where unbounded,
// rounded down to 1e-6); the minimum cut with lower bounds splits the nodes; arcs S -> T are sped
// up and arcs T -> S slowed down by one unit. All or nothing: every arc is checked before any
// duration changes. Pure.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "perseus/planner/min_cut.h"
#include "perseus/planner/pipeline_dag.h"
#include "zeus/perseus/pfo_planner.h"

namespace zeus::pfo {

// One operation's durations and costs: e'(d) tabulated for d in [min_q - 1, max_q + 1], and the
// flow bounds of its arc at each duration d in [min_q, max_q] (they depend on d alone, so they
// are computed once, not at every step).
struct StepOperation {
  int64_t min_quant_time = 0;
  int64_t max_quant_time = 0;
  int64_t first = 0;  // the duration of costs[0]
  std::vector<double> costs;
  std::vector<double> lower_bounds;  // by d - min_quant_time
  std::vector<double> upper_bounds;
  double cost(int64_t d) const { return costs[static_cast<std::size_t>(d - first)]; }
  double lower_bound(int64_t d) const {
    return lower_bounds[static_cast<std::size_t>(d - min_quant_time)];
  }
  double upper_bound(int64_t d) const {
    return upper_bounds[static_cast<std::size_t>(d - min_quant_time)];
  }
};

// The operation of durations [min_q, max_q] and cost e'(d), tabulated for the step.
StepOperation step_operation(int64_t min_quant_time, int64_t max_quant_time,
                             const std::function<double(int64_t)>& cost);
// `model` tabulated for the step.
StepOperation step_operation(const OperationModel& model);

struct StepResult {
  std::optional<StopReason> stop;  // set when the step was not applied
  double cost_change = 0.0;        // effective-energy increase
  std::vector<int> sped_up;        // instructions made one unit shorter
  std::vector<int> slowed_down;    // instructions made one unit longer
};

// Keeps scratch buffers between steps.
class PhillipsDessoukyStep {
 public:
  // `critical`: the critical arcs for `durations`; `operation_of[i]`: the StepOperation of
  // instruction i. Changes `durations` only when the step applies.
  StepResult run(const PipelineDag& dag, const std::vector<int>& critical,
                 const std::vector<const StepOperation*>& operation_of,
                 std::vector<int64_t>& durations);

 private:
  BoundedMinCut min_cut_{1e-6};
  std::vector<int> compact_;
  std::vector<int> touched_;
  std::vector<BoundedEdge> edges_;
  std::vector<double> arc_flow_;  // the last step's flow per arc
};

}  // namespace zeus::pfo
