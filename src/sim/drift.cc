// The drift experiment (zeus/sim/sim_drift.h): phases of one workload with different target
// metrics.
#include <cstdio>

#include "sim/appendf.h"
#include "sim/phases.h"
#include "zeus/sim/sim_drift.h"

namespace zeus::sim {
namespace {

struct Contender {
  std::string name;
  PolicyKind kind;
  int window_size;
};

struct SeedOutcome {
  double regret_j = 0.0, last_energy_j = 0.0, last_regret_j = 0.0, optimal_share = 0.0, failed = 0.0;
};

}  // namespace

Result<DriftResult> run_drift(const ExperimentOptions& options, const DriftOptions& drift) {
  if (options.seeds < 1) return fail(ErrorCode::kInvalidArgument, "seeds must be >= 1");
  if (drift.targets.size() < 2) return fail(ErrorCode::kInvalidArgument, "drift needs at least two target metrics");
  if (drift.window_size < 1) return fail(ErrorCode::kInvalidArgument, "the drift window must be >= 1 recurrence");
  if (drift.phase_recurrences < 0) return fail(ErrorCode::kInvalidArgument, "phase recurrences must be >= 0");
  ZEUS_TRY(validate_options(options.sim));
  auto workload = find_workload(drift.workload);
  if (!workload) return fail(workload.error());
  std::vector<Workload> phase_workloads;
  for (double target : drift.targets) {
    Workload w = *workload;
    w.target_metric = target;
    phase_workloads.push_back(w);
  }
  auto traces = load_traces_of(options.data_dir, options.gpu, phase_workloads);
  if (!traces) return fail(traces.error());

  DriftResult result;
  result.gpu = options.gpu;
  result.workload = drift.workload;
  result.eta = options.sim.eta;
  result.beta = options.sim.beta;
  result.seeds = options.seeds;
  result.window_size = drift.window_size;
  std::vector<Phase> phases;
  int first = 0;
  for (const WorkloadTrace& trace : *traces) {
    const int n = drift.phase_recurrences > 0 ? drift.phase_recurrences : recurrences_for(trace, options.sim);
    const Expectation oracle = oracle_optimum(trace, options.sim.eta);
    if (oracle.reach_probability <= 0.0) {
      return fail(ErrorCode::kInvalidArgument, drift.workload + " never reaches target " +
                                                   std::to_string(trace.workload.target_metric) + " on " + options.gpu);
    }
    result.phases.push_back(DriftPhase{trace.workload.target_metric, first, n,
                                       trace.batch_sizes[static_cast<std::size_t>(oracle.b)],
                                       trace.power_limits_w[static_cast<std::size_t>(oracle.p)], oracle.cost_j});
    phases.push_back(Phase{&trace, n});
    first += n;
  }
  const int total_recurrences = first;
  const DriftPhase& last_phase = result.phases.back();
  const std::vector<Contender> contenders = {
      {"Default", PolicyKind::kDefault, 0},
      {"GridSearch", PolicyKind::kGridSearch, 0},
      {"Zeus", PolicyKind::kZeus, 0},
      {"Zeus (window " + std::to_string(drift.window_size) + ")", PolicyKind::kZeus, drift.window_size},
      // Each phase's regret and optimal batch size are Oracle (expected)'s (oracle_optimum), so
      // that is the Oracle this experiment runs (docs/simulate.md, drift).
      {"Oracle", PolicyKind::kOracleExpected, 0}};
  const int total = static_cast<int>(contenders.size()) * options.seeds;
  int done = 0;
  std::vector<double> default_last_energy(static_cast<std::size_t>(options.seeds), 0.0);
  for (const Contender& contender : contenders) {
    DriftPolicy policy;
    policy.name = contender.name;
    policy.mean_cum_regret_j.assign(static_cast<std::size_t>(total_recurrences), 0.0);
    policy.optimal_share_curve.assign(static_cast<std::size_t>(total_recurrences), 0.0);
    std::vector<SeedOutcome> outcomes;
    for (int s = 0; s < options.seeds; ++s) {
      SimOptions sim = options.sim;
      sim.seed = options.sim.seed + static_cast<uint64_t>(s);
      sim.window_size = contender.window_size;
      auto history = simulate_phases(phases, contender.kind, sim);
      if (!history) return fail(history.error());
      SeedOutcome o;
      std::size_t phase = 0;
      int optimal = 0, counted = 0;
      const int quarter_begin = last_phase.first_recurrence + last_phase.recurrences * 3 / 4;
      for (int i = 0; i < total_recurrences; ++i) {
        while (phase + 1 < result.phases.size() && i >= result.phases[phase + 1].first_recurrence) ++phase;
        const RecurrenceRecord& r = history->recurrences[static_cast<std::size_t>(i)];
        const double regret = r.cost_j - result.phases[phase].oracle_cost_j;
        o.regret_j += regret;
        o.failed += r.reached ? 0.0 : 1.0;
        policy.mean_cum_regret_j[static_cast<std::size_t>(i)] += o.regret_j / options.seeds;
        const WorkloadTrace& trace = *phases[phase].trace;
        const int batch_size = trace.batch_sizes[static_cast<std::size_t>(r.b)];
        if (s == 0) policy.first_seed_batch_sizes.push_back(batch_size);
        if (batch_size == result.phases[phase].oracle_batch_size) {
          policy.optimal_share_curve[static_cast<std::size_t>(i)] += 1.0 / options.seeds;
        }
        if (i >= last_phase.first_recurrence) {
          o.last_energy_j += r.energy_j;
          o.last_regret_j += regret;
        }
        if (i >= quarter_begin) {
          ++counted;
          optimal += batch_size == last_phase.oracle_batch_size ? 1 : 0;
        }
      }
      o.optimal_share = counted > 0 ? static_cast<double>(optimal) / counted : 0.0;
      if (contender.kind == PolicyKind::kDefault) default_last_energy[static_cast<std::size_t>(s)] = o.last_energy_j;
      outcomes.push_back(o);
      if (options.progress) options.progress(++done, total);
    }
    std::vector<double> regret, ratio, last_regret, share, failed;
    for (int s = 0; s < options.seeds; ++s) {
      const SeedOutcome& o = outcomes[static_cast<std::size_t>(s)];
      regret.push_back(o.regret_j);
      ratio.push_back(o.last_energy_j / default_last_energy[static_cast<std::size_t>(s)]);
      last_regret.push_back(o.last_regret_j);
      share.push_back(o.optimal_share);
      failed.push_back(o.failed);
    }
    policy.cum_regret_j = stat_of(regret);
    policy.last_phase_energy_ratio = stat_of(ratio);
    policy.last_phase_regret_j = stat_of(last_regret);
    policy.last_phase_optimal_share = stat_of(share);
    policy.failed_recurrences = stat_of(failed);
    result.policies.push_back(std::move(policy));
  }
  return result;
}

std::string format_drift_table(const DriftResult& r) {
  std::string out;
  appendf(out, "drift: %s on %s, eta %.2f, beta %.2f, %d seed(s)\n", r.workload.c_str(),
          r.gpu.c_str(), r.eta, r.beta, r.seeds);
  for (std::size_t k = 0; k < r.phases.size(); ++k) {
    const DriftPhase& p = r.phases[k];
    appendf(out, "phase %zu: target %g, recurrences %d-%d, Oracle (%d, %.0f W)\n", k + 1,
            p.target_metric, p.first_recurrence + 1, p.first_recurrence + p.recurrences,
            p.oracle_batch_size, p.oracle_power_limit_w);
  }
  appendf(out, "%-16s %13s %17s %16s %15s %8s\n", "policy", "cum_regret_MJ", "last_phase_energy",
          "last_phase_MJ", "optimal_share", "failed");
  for (const DriftPolicy& p : r.policies) {
    appendf(out, "%-16s %13.3f %17.3f %16.3f %15.2f %8.1f\n", p.name.c_str(),
            p.cum_regret_j.mean / 1e6, p.last_phase_energy_ratio.mean,
            p.last_phase_regret_j.mean / 1e6, p.last_phase_optimal_share.mean,
            p.failed_recurrences.mean);
  }
  out += "regret against each phase's Oracle; last_phase_energy: energy in the last phase / Default's;\n"
         "optimal_share: share of the last phase's final quarter run at that phase's optimal batch size;\n"
         "failed: recurrences given up after max_tries runs (every run missed the target or was early-stopped)\n";
  return out;
}

}  // namespace zeus::sim
