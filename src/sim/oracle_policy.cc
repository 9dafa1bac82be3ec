// The two oracles (simulator.h): the (b, p) of least expected recurrence cost, known in advance,
// among every (b, p) (Oracle (expected)) or among those whose every path reaches the target
// (Oracle, the paper's).
#include <algorithm>
#include <limits>

#include "sim/policy.h"

namespace zeus::sim {

Expectation expected_recurrence(const WorkloadTrace& trace, int b, int p, double eta) {
  Expectation e;
  e.b = b;
  e.p = p;
  const std::vector<int>& paths = trace.paths[static_cast<std::size_t>(b)];
  const int max_epochs = trace.workload.max_epochs;
  int reaching = 0;
  double epochs_sum = 0.0;
  for (int target : paths) {
    const bool reaches = target >= 1 && target <= max_epochs;
    reaching += reaches ? 1 : 0;
    epochs_sum += reaches ? target : max_epochs;
  }
  e.reach_probability = paths.empty() ? 0.0 : static_cast<double>(reaching) / static_cast<double>(paths.size());
  if (reaching == 0) {
    const double inf = std::numeric_limits<double>::infinity();
    e.time_s = e.energy_j = e.cost_j = inf;
    return e;
  }
  // Runs until success are geometric: E[total] = E[one run] / P(reach).
  const double epochs = epochs_sum / static_cast<double>(reaching);
  e.time_s = epochs * trace.time_per_epoch_s(b, p);
  e.energy_j = epochs * trace.energy_per_epoch_j(b, p);
  e.cost_j = epochs * trace.epoch_cost(b, p, eta);
  return e;
}

namespace {

// The least expected cost among (b, p) with reach probability >= min_reach (ties: larger power
// limit, then smaller batch size).
Expectation best_expectation(const WorkloadTrace& trace, double eta, double min_reach) {
  Expectation best;
  best.cost_j = std::numeric_limits<double>::infinity();
  bool found = false;
  for (int b = 0; b < trace.num_batch_sizes(); ++b) {
    for (int p = trace.num_power_limits() - 1; p >= 0; --p) {
      Expectation e = expected_recurrence(trace, b, p, eta);
      if (e.reach_probability <= 0.0 || e.reach_probability < min_reach) continue;
      if (!found || e.cost_j < best.cost_j ||
          (e.cost_j == best.cost_j && (e.p > best.p || (e.p == best.p && e.b < best.b)))) {
        best = e;
        found = true;
      }
    }
  }
  if (!found) return expected_recurrence(trace, trace.default_b, trace.num_power_limits() - 1, eta);
  return best;
}

}  // namespace

Expectation oracle_optimum(const WorkloadTrace& trace, double eta) {
  return best_expectation(trace, eta, 0.0);
}

Expectation oracle_all_paths_optimum(const WorkloadTrace& trace, double eta) {
  double highest = 0.0;
  for (int b = 0; b < trace.num_batch_sizes(); ++b) {
    highest = std::max(highest, expected_recurrence(trace, b, 0, eta).reach_probability);
  }
  return best_expectation(trace, eta, highest);
}

namespace {

class OraclePolicy final : public Policy {
 public:
  OraclePolicy(const WorkloadTrace& trace, const SimOptions& options, bool all_paths) {
    const Expectation best =
        all_paths ? oracle_all_paths_optimum(trace, options.eta) : oracle_optimum(trace, options.eta);
    plan_.b = best.b;
    plan_.p = best.p;
  }
  RunPlan plan(Rng&) override { return plan_; }
  void observe(const RunPlan&, const RunRecord&) override {}

 private:
  RunPlan plan_;
};

}  // namespace

std::unique_ptr<Policy> make_oracle_policy(const WorkloadTrace& trace, const SimOptions& options,
                                           bool all_paths) {
  return std::make_unique<OraclePolicy>(trace, options, all_paths);
}

}  // namespace zeus::sim
