// The search-path experiment (zeus/sim/sim_search_path.h).
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "sim/appendf.h"
#include "zeus/sim/sim_search_path.h"

namespace zeus::sim {

Result<SearchPathResult> run_search_path(const ExperimentOptions& options) {
  ZEUS_TRY(validate_options(options.sim));
  auto traces = load_workload_traces(options.data_dir, options.gpu, options.workloads);
  if (!traces) return fail(traces.error());
  SearchPathResult result;
  result.gpu = options.gpu;
  result.eta = options.sim.eta;
  result.beta = options.sim.beta;
  result.seed = options.sim.seed;
  const PolicyKind kPolicies[] = {PolicyKind::kGridSearch, PolicyKind::kZeus};
  const int total = static_cast<int>(traces->size()) * 2;
  int done = 0;
  for (const WorkloadTrace& trace : *traces) {
    WorkloadSearchPath w;
    w.name = trace.workload.name;
    w.batch_sizes = trace.batch_sizes;
    w.power_limits_w = trace.power_limits_w;
    w.default_batch_size = trace.workload.default_batch_size;
    const Expectation oracle = oracle_optimum(trace, options.sim.eta);
    w.oracle_batch_size = trace.batch_sizes[static_cast<std::size_t>(oracle.b)];
    w.oracle_power_limit_w = trace.power_limits_w[static_cast<std::size_t>(oracle.p)];
    for (int b = 0; b < trace.num_batch_sizes(); ++b) {
      std::vector<double> row;
      for (int p = 0; p < trace.num_power_limits(); ++p) {
        row.push_back(expected_recurrence(trace, b, p, options.sim.eta).cost_j / oracle.cost_j);
      }
      w.regret_ratio.push_back(std::move(row));
    }
    for (PolicyKind kind : kPolicies) {
      auto history = simulate(trace, kind, options.sim);
      if (!history) return fail(history.error());
      PolicyPath path;
      path.policy = kind;
      std::set<std::pair<int, int>> seen;
      for (const RunRecord& run : history->runs) {
        path.steps.push_back(PathStep{run.recurrence, trace.batch_sizes[static_cast<std::size_t>(run.b)],
                                      trace.power_limits_w[static_cast<std::size_t>(run.p)], run.cost_j, run.reached,
                                      run.early_stopped, run.profiled});
        seen.insert({run.b, run.p});
      }
      path.distinct_configurations = static_cast<int>(seen.size());
      w.paths.push_back(std::move(path));
      if (options.progress) options.progress(++done, total);
    }
    result.workloads.push_back(std::move(w));
  }
  return result;
}

std::string format_search_path_table(const SearchPathResult& r) {
  std::string out;
  appendf(out, "search-path: gpu %s, eta %.2f, beta %.2f, seed %llu\n", r.gpu.c_str(), r.eta,
          r.beta, static_cast<unsigned long long>(r.seed));
  for (const WorkloadSearchPath& w : r.workloads) {
    appendf(out, "%s: b0 %d, Oracle (%d, %.0f W)\n", w.name.c_str(), w.default_batch_size,
            w.oracle_batch_size, w.oracle_power_limit_w);
    for (const PolicyPath& path : w.paths) {
      appendf(out, "  %-10s %4zu runs, %3d configurations:",
              std::string(policy_name(path.policy)).c_str(), path.steps.size(),
              path.distinct_configurations);
      // Consecutive runs of one configuration collapse into "(b, W)xN"; a failed run is marked "!".
      std::size_t i = 0;
      while (i < path.steps.size()) {
        std::size_t j = i;
        int failed = 0;
        while (j < path.steps.size() && path.steps[j].batch_size == path.steps[i].batch_size &&
               path.steps[j].power_limit_w == path.steps[i].power_limit_w) {
          failed += path.steps[j].reached ? 0 : 1;
          ++j;
        }
        appendf(out, " (%d,%.0f)", path.steps[i].batch_size, path.steps[i].power_limit_w);
        if (j - i > 1) out += "x" + std::to_string(j - i);
        if (failed > 0) out += "!" + (failed > 1 ? std::to_string(failed) : std::string());
        i = j;
      }
      out += "\n";
    }
  }
  out += "(b,W)xN: N consecutive runs of batch size b at W watts; !N: N of them failed (missed the target or early-stopped)\n";
  return out;
}

}  // namespace zeus::sim
