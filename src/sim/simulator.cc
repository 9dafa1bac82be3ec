// simulate(): the recurrence loop shared by every policy, and the option checks.
#include <cmath>
#include <string>

#include "sim/phases.h"
#include "sim/replay.h"
#include "zeus/sim/simulator.h"

namespace zeus::sim {

std::string_view policy_name(PolicyKind policy) {
  switch (policy) {
    case PolicyKind::kDefault: return "Default";
    case PolicyKind::kGridSearch: return "GridSearch";
    case PolicyKind::kZeus: return "Zeus";
    case PolicyKind::kOracle: return "Oracle";
    case PolicyKind::kOracleExpected: return "Oracle (expected)";
  }
  return "?";
}

Result<PolicyKind> parse_policy(std::string_view name) {
  for (PolicyKind kind : all_policies()) {
    if (policy_name(kind) == name) return kind;
  }
  return fail(ErrorCode::kInvalidArgument,
              "unknown policy '" + std::string(name) +
                  "' (use Default, GridSearch, Zeus, Oracle or 'Oracle (expected)')");
}

const std::vector<PolicyKind>& all_policies() {
  static const std::vector<PolicyKind> kAll = {PolicyKind::kDefault, PolicyKind::kGridSearch, PolicyKind::kZeus,
                                               PolicyKind::kOracle, PolicyKind::kOracleExpected};
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
  if (options.window_size < 0) return fail(ErrorCode::kInvalidArgument, "window_size must be >= 0 (0 = all history)");
  if (options.steps_per_epoch < 0) {
    return fail(ErrorCode::kInvalidArgument, "steps_per_epoch must be >= 0 (0 = 50 x |P| + 1)");
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

SeedStreams seed_streams(uint64_t seed) {
  uint64_t state = seed;
  Rng paths(bso::splitmix64(&state));
  Rng policy(bso::splitmix64(&state));
  return SeedStreams{paths, policy};
}

RunRecord replay_run(const WorkloadTrace& trace, const RunPlan& plan, int target_epoch, const SimOptions& options) {
  if (options.fidelity == Fidelity::kStep) {
    return replay_run_steps(trace, plan, target_epoch, options.eta, options.steps_per_epoch);
  }
  return replay_run_epochs(trace, plan, target_epoch, options.eta);
}

Result<History> simulate_phases(std::span<const Phase> phases, PolicyKind kind, const SimOptions& options) {
  ZEUS_TRY(validate_options(options));
  if (phases.empty()) return fail(ErrorCode::kInvalidArgument, "a simulation needs at least one phase");
  const WorkloadTrace& first = *phases[0].trace;
  for (const Phase& phase : phases) {
    const WorkloadTrace& t = *phase.trace;
    if (t.batch_sizes != first.batch_sizes || t.power_limits_w != first.power_limits_w ||
        t.max_power_w != first.max_power_w || t.default_b != first.default_b) {
      return fail(ErrorCode::kInvalidArgument,
                  "the phases of a drifting job must share batch sizes, power limits and b0 (" + t.workload.name +
                      " differs from " + first.workload.name + ")");
    }
  }
  auto policy = make_policy(kind, first, options);
  if (!policy) return fail(policy.error());
  SeedStreams rng = seed_streams(options.seed);

  History history;
  history.policy = kind;
  int total = 0;
  for (const Phase& phase : phases) total += phase.recurrences;
  history.recurrences.reserve(static_cast<std::size_t>(total));
  history.runs.reserve(static_cast<std::size_t>(total) * 2);
  int index = 0;
  for (std::size_t k = 0; k < phases.size(); ++k) {
    const WorkloadTrace& trace = *phases[k].trace;
    if (k > 0 && (kind == PolicyKind::kOracle || kind == PolicyKind::kOracleExpected)) {
      policy = make_policy(kind, trace, options);
      if (!policy) return fail(policy.error());
    }
    for (int i = 0; i < phases[k].recurrences; ++i, ++index) {
      RecurrenceRecord recurrence;
      for (int attempt = 0; attempt < options.max_tries && !recurrence.reached; ++attempt) {
        const RunPlan plan = (*policy)->plan(rng.policy);
        const std::vector<int>& paths = trace.paths[static_cast<std::size_t>(plan.b)];
        const int target_epoch = paths[rng.paths.below(paths.size())];
        RunRecord run = replay_run(trace, plan, target_epoch, options);
        run.recurrence = index;
        if (run.profiled) (*policy)->adopt_power_limit(run.b, run.p);
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
  }
  return history;
}

Result<History> simulate(const WorkloadTrace& trace, PolicyKind kind, const SimOptions& options) {
  const Phase phase{&trace, recurrences_for(trace, options)};
  return simulate_phases(std::span<const Phase>(&phase, 1), kind, options);
}

}  // namespace zeus::sim
