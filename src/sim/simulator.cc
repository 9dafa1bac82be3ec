// simulate(): the recurrence loop shared by every policy, and the option checks.
#include <cmath>
#include <string>

#include "sim/policy.h"
#include "sim/replay.h"
#include "zeus/simulator.h"

namespace zeus::sim {

std::string_view policy_name(PolicyKind policy) {
  switch (policy) {
    case PolicyKind::kDefault: return "Default";
    case PolicyKind::kGridSearch: return "GridSearch";
    case PolicyKind::kZeus: return "Zeus";
    case PolicyKind::kOracle: return "Oracle";
  }
  return "?";
}

Result<PolicyKind> parse_policy(std::string_view name) {
  for (PolicyKind kind : all_policies()) {
    if (policy_name(kind) == name) return kind;
  }
  return fail(ErrorCode::kInvalidArgument,
              "unknown policy '" + std::string(name) + "' (use Default, GridSearch, Zeus or Oracle)");
}

const std::vector<PolicyKind>& all_policies() {
  static const std::vector<PolicyKind> kAll = {PolicyKind::kDefault, PolicyKind::kGridSearch, PolicyKind::kZeus,
                                               PolicyKind::kOracle};
  return kAll;
}

Result<Fidelity> parse_fidelity(std::string_view name) {
  if (name == "epoch") return Fidelity::kEpoch;
  if (name == "step") return Fidelity::kStep;
  return fail(ErrorCode::kInvalidArgument, "unknown fidelity '" + std::string(name) + "' (use epoch or step)");
}

Result<void> validate_options(const SimOptions& options) {
  if (!(options.eta >= 0.0 && options.eta <= 1.0)) {
    return fail(ErrorCode::kInvalidArgument, "eta must be in [0, 1], got " + std::to_string(options.eta));
  }
  if (!(options.beta == 0.0 || (options.beta >= 1.0 && std::isfinite(options.beta)))) {
    return fail(ErrorCode::kInvalidArgument,
                "beta must be >= 1 (or 0 to disable early stopping), got " + std::to_string(options.beta));
  }
  if (options.recurrences < 0) {
    return fail(ErrorCode::kInvalidArgument, "recurrences must be >= 0 (0 = 2 x |B| x |P|)");
  }
  if (options.max_tries < 1) return fail(ErrorCode::kInvalidArgument, "max_tries must be >= 1");
  if (options.fidelity == Fidelity::kStep) {
    return fail(ErrorCode::kInvalidArgument,
                "the step fidelity is not available in this build yet (use --fidelity epoch)");
  }
  return ok();
}

int recurrences_for(const WorkloadTrace& trace, const SimOptions& options) {
  if (options.recurrences > 0) return options.recurrences;
  return 2 * trace.num_batch_sizes() * trace.num_power_limits();
}

double History::total_energy_j() const {
  double sum = 0.0;
  for (const RecurrenceRecord& r : recurrences) sum += r.energy_j;
  return sum;
}
double History::total_time_s() const {
  double sum = 0.0;
  for (const RecurrenceRecord& r : recurrences) sum += r.time_s;
  return sum;
}
double History::total_cost_j() const {
  double sum = 0.0;
  for (const RecurrenceRecord& r : recurrences) sum += r.cost_j;
  return sum;
}

Result<History> simulate(const WorkloadTrace& trace, PolicyKind kind, const SimOptions& options) {
  ZEUS_TRY(validate_options(options));
  auto policy = make_policy(kind, trace, options);
  if (!policy) return fail(policy.error());
  uint64_t seed_state = options.seed;
  Rng path_rng(Rng::splitmix64(seed_state));
  Rng policy_rng(Rng::splitmix64(seed_state));

  History history;
  history.policy = kind;
  const int recurrences = recurrences_for(trace, options);
  history.recurrences.reserve(static_cast<std::size_t>(recurrences));
  history.runs.reserve(static_cast<std::size_t>(recurrences) * 2);
  for (int i = 0; i < recurrences; ++i) {
    RecurrenceRecord recurrence;
    for (int attempt = 0; attempt < options.max_tries && !recurrence.reached; ++attempt) {
      const RunPlan plan = (*policy)->plan(policy_rng);
      const std::vector<int>& paths = trace.paths[static_cast<std::size_t>(plan.b)];
      const int target_epoch = paths[path_rng.uniform_below(paths.size())];
      RunRecord run = replay_run_epochs(trace, plan, target_epoch, options.eta);
      run.recurrence = i;
      (*policy)->observe(plan, run);
      recurrence.b = run.b;
      recurrence.p = run.p;
      recurrence.tries += 1;
      recurrence.reached = run.reached;
      recurrence.time_s += run.time_s;
      recurrence.energy_j += run.energy_j;
      recurrence.cost_j += run.cost_j;
      history.runs.push_back(run);
    }
    history.recurrences.push_back(recurrence);
  }
  return history;
}

}  // namespace zeus::sim
