// Grid Search with pruning: one untried (b, p) per run, batch sizes down from b0 then up from
// b0, power limits from high to low; a batch size whose run fails to reach the target is dropped
// together with the rest of its direction (pruning). Every run carries the beta early stop
// (beta x the least cost of a run that reached the target). Once the grid is exhausted, every
// run uses the configuration of least observed cost.
#include <limits>

#include "sim/policy.h"

namespace zeus::sim {
namespace {

class GridSearchPolicy final : public Policy {
 public:
  GridSearchPolicy(const WorkloadTrace& trace, const SimOptions& options)
      : num_b_(trace.num_batch_sizes()),
        num_p_(trace.num_power_limits()),
        b0_(trace.default_b),
        beta_(options.early_stopping ? options.beta : 0.0),
        pruning_(options.pruning),
        b_(trace.default_b),
        p_(trace.num_power_limits() - 1),
        best_b_(trace.default_b),
        best_p_(trace.num_power_limits() - 1) {}

  RunPlan plan(Rng&) override {
    RunPlan plan;
    if (direction_ == kDone) {
      plan.b = best_b_;
      plan.p = best_p_;
    } else {
      plan.b = b_;
      plan.p = p_;
    }
    if (beta_ > 0.0) plan.beta = beta_;
    if (min_cost_j_ < kInf) plan.min_cost_j = min_cost_j_;
    return plan;
  }

  void observe(const RunPlan&, const RunRecord& run) override {
    if (run.reached && run.cost_j < min_cost_j_) min_cost_j_ = run.cost_j;
    if (direction_ == kDone) return;
    if (run.reached && run.cost_j < best_cost_j_) {
      best_cost_j_ = run.cost_j;
      best_b_ = run.b;
      best_p_ = run.p;
    }
    if (!run.reached && pruning_) {
      end_direction();
      return;
    }
    if (--p_ < 0) next_batch_size();
  }

 private:
  enum Direction { kDown, kUp, kDone };
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  void next_batch_size() {
    p_ = num_p_ - 1;
    b_ += direction_ == kDown ? -1 : 1;
    if (b_ < 0 || b_ >= num_b_) end_direction();
  }
  void end_direction() {
    p_ = num_p_ - 1;
    if (direction_ == kDown) {
      direction_ = kUp;
      b_ = b0_ + 1;
      if (b_ < num_b_) return;
    }
    direction_ = kDone;
  }

  const int num_b_, num_p_, b0_;
  const double beta_;
  const bool pruning_;
  Direction direction_ = kDown;
  int b_, p_;
  int best_b_, best_p_;
  double best_cost_j_ = kInf;
  double min_cost_j_ = kInf;
};

}  // namespace

std::unique_ptr<Policy> make_grid_search_policy(const WorkloadTrace& trace, const SimOptions& options) {
  return std::make_unique<GridSearchPolicy>(trace, options);
}

}  // namespace zeus::sim
