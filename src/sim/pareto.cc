// The pareto experiment (paper Fig. 2/5): every (b, p) as expected (TTA, ETA) per recurrence.
#include <cmath>
#include <cstdio>

#include "sim/appendf.h"
#include "zeus/sim/sim_experiments.h"

namespace zeus::sim {

Result<ParetoResult> run_pareto(const ExperimentOptions& options) {
  ZEUS_TRY(validate_options(options.sim));
  auto traces = load_workload_traces(options.data_dir, options.gpu, options.workloads);
  if (!traces) return fail(traces.error());
  ParetoResult result;
  result.gpu = options.gpu;
  result.eta = options.sim.eta;
  for (const WorkloadTrace& trace : *traces) {
    WorkloadPareto w;
    w.name = trace.workload.name;
    const Expectation best = oracle_optimum(trace, options.sim.eta);
    for (int b = 0; b < trace.num_batch_sizes(); ++b) {
      for (int p = 0; p < trace.num_power_limits(); ++p) {
        const Expectation e = expected_recurrence(trace, b, p, options.sim.eta);
        if (e.reach_probability <= 0.0) continue;
        ParetoPoint point;
        point.batch_size = trace.batch_sizes[static_cast<std::size_t>(b)];
        point.power_limit_w = trace.power_limits_w[static_cast<std::size_t>(p)];
        point.tta_s = e.time_s;
        point.eta_j = e.energy_j;
        point.cost_j = e.cost_j;
        point.reach_probability = e.reach_probability;
        point.is_default = b == trace.default_b && p == trace.num_power_limits() - 1;
        point.is_optimum = b == best.b && p == best.p;
        w.points.push_back(point);
      }
    }
    for (ParetoPoint& a : w.points) {
      a.on_frontier = true;
      for (const ParetoPoint& o : w.points) {
        const bool dominates = o.tta_s <= a.tta_s && o.eta_j <= a.eta_j && (o.tta_s < a.tta_s || o.eta_j < a.eta_j);
        if (dominates) {
          a.on_frontier = false;
          break;
        }
      }
    }
    result.workloads.push_back(std::move(w));
  }
  return result;
}

std::string format_pareto_table(const ParetoResult& result) {
  std::string out;
  appendf(out, "pareto: gpu %s, eta %.2f; expected per recurrence (retries included)\n",
          result.gpu.c_str(), result.eta);
  appendf(out, "%-14s %6s %7s %12s %12s %6s  %s\n", "workload", "batch", "limit_W", "TTA_s",
          "ETA_kJ", "reach", "mark");
  for (const WorkloadPareto& w : result.workloads) {
    for (const ParetoPoint& p : w.points) {
      if (!p.on_frontier && !p.is_default && !p.is_optimum) continue;
      std::string mark;
      if (p.on_frontier) mark += "frontier ";
      if (p.is_default) mark += "default ";
      if (p.is_optimum) mark += "optimum";
      appendf(out, "%-14s %6d %7.0f %12.1f %12.1f %6.2f  %s\n", w.name.c_str(), p.batch_size,
              p.power_limit_w, p.tta_s, p.eta_j / 1e3, p.reach_probability, mark.c_str());
    }
  }
  return out;
}

}  // namespace zeus::sim
