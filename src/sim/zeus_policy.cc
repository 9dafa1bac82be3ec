// Zeus: the batch-size optimizer's pure cores decide the batch size (pruning explorer, then
// Gaussian Thompson sampling over the surviving arms) and the early stop (applied by the replay
// through bso::decide_stop); the power-limit optimizer's ZeusCost selector picks the power limit
// of each batch size from its JIT profile, measured in the first epoch of the batch size's first
// run (closed form at epoch fidelity: the first epoch is sliced evenly across the limits).
// Nothing here decides by itself: it only feeds the cores the replay's observations.
#include <limits>
#include <vector>

#include "optimizer/batch_size/gaussian_ts.h"
#include "optimizer/batch_size/pruning_explorer.h"
#include "optimizer/batch_size/rng.h"
#include "sim/policy.h"
#include "zeus/power_limit_selector.h"

namespace zeus::sim {
namespace {

constexpr int kNumPruningRounds = 2;    // REFERENCE.md §3 defaults
constexpr int kNumExplorations = 2;

class ZeusPolicy final : public Policy {
 public:
  ZeusPolicy(const WorkloadTrace& trace, const SimOptions& options, PowerLimitSelector selector)
      : trace_(trace),
        options_(options),
        selector_(selector),
        rng_(derive_seed(options.seed)),
        costs_(static_cast<std::size_t>(trace.num_batch_sizes())),
        chosen_p_(static_cast<std::size_t>(trace.num_batch_sizes()), -1) {
    if (!options.pruning) {
      arms_ = trace.batch_sizes;
      pruning_done_ = true;
    }
  }

  RunPlan plan(Rng&) override {
    RunPlan plan;
    plan.b = next_batch_index();
    if (options_.early_stopping && options_.beta > 0.0) plan.beta = options_.beta;
    if (min_cost_j_ < std::numeric_limits<double>::infinity()) plan.min_cost_j = min_cost_j_;
    int& p = chosen_p_[static_cast<std::size_t>(plan.b)];
    if (p < 0) {
      p = options_.jit_profiling ? jit_power_limit(plan.b) : trace_.num_power_limits() - 1;
      plan.profile_power = options_.jit_profiling;
    }
    plan.p = p;
    return plan;
  }

  void observe(const RunPlan& plan, const RunRecord& run) override {
    costs_[static_cast<std::size_t>(plan.b)].push_back(run.cost_j);
    if (run.reached && run.cost_j < min_cost_j_) min_cost_j_ = run.cost_j;
    if (last_was_pruning_) {
      bso::PruningObservation obs;
      obs.batch_size = trace_.batch_sizes[static_cast<std::size_t>(plan.b)];
      obs.status = run.reached ? TrialStatus::kConverged : TrialStatus::kNotConverged;
      obs.cost = run.cost_j;
      pruning_history_.push_back(obs);
    }
  }

 private:
  static uint64_t derive_seed(uint64_t seed) {
    uint64_t state = seed ^ 0x5a17ee5ULL;
    return Rng::splitmix64(state);
  }

  int next_batch_index() {
    last_was_pruning_ = false;
    if (!pruning_done_) {
      auto decision = bso::next_pruning_step(trace_.batch_sizes, trace_.workload.default_batch_size,
                                             kNumPruningRounds, pruning_history_);
      ZEUS_CHECK(decision.has_value(), "the replay fed the pruning explorer an inconsistent history");
      if (decision->action != bso::PruningAction::kDone) {
        // Runs are sequential here, so kUseBestKnown (a concurrent request) cannot occur.
        last_was_pruning_ = decision->action == bso::PruningAction::kExplore;
        return trace_.batch_index(decision->batch_size);
      }
      arms_ = decision->arms;
      pruning_done_ = true;
    }
    beliefs_.clear();
    for (int batch_size : arms_) {
      const std::vector<double>& costs = costs_[static_cast<std::size_t>(trace_.batch_index(batch_size))];
      beliefs_.push_back(bso::arm_belief(bso::newest_costs(costs, 0), bso::Prior{}));
    }
    const std::size_t arm = bso::choose_arm(beliefs_, kNumExplorations, rng_);
    return trace_.batch_index(arms_[arm]);
  }

  // The power-limit optimizer's choice from the JIT profile of batch size b: per limit, one
  // epoch's energy and time.
  int jit_power_limit(int b) {
    measurements_.clear();
    for (int p = 0; p < trace_.num_power_limits(); ++p) {
      measurements_.push_back(KnobMeasurement{static_cast<uint32_t>(trace_.power_limits_w[static_cast<std::size_t>(p)]),
                                              trace_.energy_per_epoch_j(b, p), trace_.time_per_epoch_s(b, p)});
    }
    auto setting = selector_.select(measurements_, trace_.max_power_w);
    ZEUS_CHECK(setting.has_value(), "the power-limit selector rejected a trace profile");
    for (int p = 0; p < trace_.num_power_limits(); ++p) {
      if (static_cast<uint32_t>(trace_.power_limits_w[static_cast<std::size_t>(p)]) == *setting) return p;
    }
    ZEUS_CHECK(false, "the power-limit selector chose a limit outside the profile");
    return trace_.num_power_limits() - 1;
  }

  const WorkloadTrace& trace_;
  const SimOptions options_;
  const PowerLimitSelector selector_;
  bso::Rng rng_;
  std::vector<std::vector<double>> costs_;  // per batch-size index, every run's cost in order
  std::vector<int> chosen_p_;               // per batch-size index; -1 until profiled
  std::vector<bso::PruningObservation> pruning_history_;
  std::vector<int> arms_;
  std::vector<bso::Belief> beliefs_;
  std::vector<KnobMeasurement> measurements_;
  bool pruning_done_ = false;
  bool last_was_pruning_ = false;
  double min_cost_j_ = std::numeric_limits<double>::infinity();
};

}  // namespace

Result<std::unique_ptr<Policy>> make_zeus_policy(const WorkloadTrace& trace, const SimOptions& options) {
  auto selector = PowerLimitSelector::zeus_cost(options.eta);
  if (!selector) return fail(selector.error());
  std::unique_ptr<Policy> policy = std::make_unique<ZeusPolicy>(trace, options, *selector);
  return policy;
}

}  // namespace zeus::sim
