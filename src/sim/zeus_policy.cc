// Zeus: the batch-size optimizer's decision core (bso::decide_next_trial: the pruning explorer,
// then Gaussian Thompson sampling over the surviving arms — the very function the live optimizer
// and the server call) picks each run's batch size from the job's trial history; the early stop
// is the optimizer's report rule (applied by the replay through bso::decide_stop); the
// power-limit optimizer's ZeusCost selector picks the power limit of each batch size from its JIT
// profile, measured in the first epoch of the batch size's first run (closed form at epoch
// fidelity: the first epoch is sliced evenly across the limits; at step fidelity the real
// PowerLimitOptimizer decides and the policy adopts its choice).
// Several runs may be outstanding (concurrent submissions): they are dispatched trials, which the
// pruning explorer answers with the best batch size known so far.
#include <limits>
#include <vector>

#include "optimizer/batch_size/early_stop.h"
#include "optimizer/batch_size/next_epoch_cost.h"
#include "optimizer/batch_size/next_trial.h"
#include "sim/policy.h"
#include "zeus/optimizer/bso_types.h"
#include "zeus/optimizer/power_limit_selector.h"

namespace zeus::sim {
namespace {

constexpr int kNumPruningRounds = 2;  // docs/server.md defaults
constexpr int kNumExplorations = 2;

}  // namespace

JobSpec zeus_job_spec(const WorkloadTrace& trace, const SimOptions& options) {
  JobSpec spec;
  spec.job_id = "sim";
  spec.batch_sizes = trace.batch_sizes;
  spec.default_batch_size = trace.workload.default_batch_size;
  spec.eta_knob = options.eta;
  if (options.early_stopping && options.beta > 0.0) spec.beta_knob = options.beta;
  else spec.beta_knob.reset();
  spec.max_epochs = trace.workload.max_epochs;
  spec.num_pruning_rounds = options.pruning ? kNumPruningRounds : 0;
  spec.window_size = options.window_size;
  spec.mab_num_explorations = kNumExplorations;
  spec.max_power_w = trace.max_power_w;
  spec.early_stop = options.zeus.early_stop;
  spec.prune_factor = options.zeus.prune_factor;
  spec.mab_min_relative_sd = options.zeus.mab_min_relative_sd;
  if (spec.beta_knob) spec.pruning_beta_knob = options.zeus.pruning_beta;
  spec.pruning_stop_after_rises = options.zeus.pruning_stop_after_rises;
  return spec;
}

uint64_t zeus_bandit_seed(uint64_t seed) {
  uint64_t state = seed ^ 0x5a17ee5ULL;
  return bso::splitmix64(&state);
}

namespace {

class ZeusPolicy final : public Policy {
 public:
  ZeusPolicy(const WorkloadTrace& trace, const SimOptions& options, PowerLimitSelector selector)
      : trace_(trace),
        options_(options),
        spec_(zeus_job_spec(trace, options)),
        selector_(selector),
        rng_(zeus_bandit_seed(options.seed)),
        chosen_p_(static_cast<std::size_t>(trace.num_batch_sizes()), -1) {}

  RunPlan plan(Rng&) override {
    auto decision = bso::decide_next_trial(spec_, trials_, rng_);
    ZEUS_CHECK(decision.has_value(), "the replay fed the batch-size optimizer an inconsistent history");
    Trial trial;
    trial.trial_number = static_cast<int>(trials_.size()) + 1;
    trial.batch_size = decision->batch_size;
    trial.kind = decision->kind;
    trial.pruning_round = decision->pruning_round;
    trials_.push_back(trial);

    RunPlan plan;
    plan.ticket = trial.trial_number - 1;
    plan.best_known_answer = decision->kind == TrialKind::kConcurrent;
    plan.b = trace_.batch_index(decision->batch_size);
    ZEUS_CHECK(plan.b >= 0, "the batch-size optimizer chose a batch size outside the trace");
    plan.beta = bso::stop_rule_of(spec_, trial.kind).beta;
    if (min_cost_j_ < std::numeric_limits<double>::infinity()) plan.min_cost_j = min_cost_j_;
    plan.early_stop = spec_.early_stop;
    plan.prior_epoch_cost_j = bso::prior_epoch_cost(trials_, trial.batch_size);
    int& p = chosen_p_[static_cast<std::size_t>(plan.b)];
    if (p < 0) {
      p = options_.jit_profiling ? jit_power_limit(plan.b) : trace_.num_power_limits() - 1;
      plan.profile_power = options_.jit_profiling;
    }
    plan.p = p;
    return plan;
  }

  void observe(const RunPlan& plan, const RunRecord& run) override {
    ZEUS_CHECK(plan.ticket >= 0 && plan.ticket < static_cast<int>(trials_.size()), "observe() of an unknown plan");
    Trial& trial = trials_[static_cast<std::size_t>(plan.ticket)];
    ZEUS_CHECK(trial.status == TrialStatus::kDispatched, "a run was observed twice");
    trial.status = run.reached ? TrialStatus::kConverged : TrialStatus::kNotConverged;
    trial.cost = run.cost_j;
    trial.time_s = run.time_s;
    trial.energy_j = run.energy_j;
    trial.epochs = run.epochs;
    if (!options_.zeus.upstream_bookkeeping) {
      if (run.reached && run.cost_j < min_cost_j_) min_cost_j_ = run.cost_j;
      return;
    }
    // Upstream's simulator: a run not started (its first epoch alone would cross the bound) is
    // observed as 100·β·min_cost; min_cost is the least total cost of a recurrence.
    if (run.epochs == 0) trial.cost = 100.0 * spec_.beta_knob.value_or(1.0) * min_cost_j_;
    if (run.recurrence != recurrence_) {
      recurrence_ = run.recurrence;
      recurrence_cost_j_ = 0.0;
    }
    recurrence_cost_j_ += run.cost_j;
    if (run.reached && recurrence_cost_j_ < min_cost_j_) min_cost_j_ = recurrence_cost_j_;
  }

  void adopt_power_limit(int b, int p) override { chosen_p_[static_cast<std::size_t>(b)] = p; }

 private:

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
  const JobSpec spec_;
  const PowerLimitSelector selector_;
  bso::Rng rng_;
  std::vector<Trial> trials_;  // one per run, in dispatch order (ticket = index)
  std::vector<int> chosen_p_;  // per batch-size index; -1 until profiled
  std::vector<KnobMeasurement> measurements_;
  double min_cost_j_ = std::numeric_limits<double>::infinity();
  int recurrence_ = -1;            // upstream bookkeeping: the recurrence being summed
  double recurrence_cost_j_ = 0.0;
};

}  // namespace

Result<std::unique_ptr<Policy>> make_zeus_policy(const WorkloadTrace& trace, const SimOptions& options) {
  auto selector = PowerLimitSelector::zeus_cost(options.eta);
  if (!selector) return fail(selector.error());
  std::unique_ptr<Policy> policy = std::make_unique<ZeusPolicy>(trace, options, *selector);
  return policy;
}

}  // namespace zeus::sim
