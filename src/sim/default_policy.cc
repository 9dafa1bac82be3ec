// Default: the user's default batch size b0 at the maximum power limit, every run; no
// exploration, no early stop, no profiling.
#include "sim/policy.h"

namespace zeus::sim {
namespace {

class DefaultPolicy final : public Policy {
 public:
  explicit DefaultPolicy(const WorkloadTrace& trace) {
    plan_.b = trace.default_b;
    plan_.p = trace.num_power_limits() - 1;
  }
  RunPlan plan(Rng&) override { return plan_; }
  void observe(const RunPlan&, const RunRecord&) override {}

 private:
  RunPlan plan_;
};

}  // namespace

std::unique_ptr<Policy> make_default_policy(const WorkloadTrace& trace) {
  return std::make_unique<DefaultPolicy>(trace);
}

}  // namespace zeus::sim
