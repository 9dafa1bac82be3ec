// zeus simulate compare: two configurations of the Zeus policy on the same seeds (sim_compare.h).
#include <cmath>
#include <cstdio>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/appendf.h"
#include "sim/parallel.h"
#include "zeus/sim/sim_compare.h"

namespace zeus::sim {
namespace {

struct SeedTotals {
  double energy_j = 0.0, last5_energy_j = 0.0, regret_j = 0.0;
};

SeedTotals seed_totals(const History& history, double oracle_cost_j) {
  SeedTotals t;
  const std::size_t n = history.recurrences.size();
  const std::size_t last5_begin = n > 5 ? n - 5 : 0;
  for (std::size_t i = 0; i < n; ++i) {
    const RecurrenceRecord& r = history.recurrences[i];
    t.energy_j += r.energy_j;
    t.regret_j += r.cost_j - oracle_cost_j;
    if (i >= last5_begin) t.last5_energy_j += r.energy_j;
  }
  return t;
}

// Mean and standard error (sample standard deviation / √n) of `values`.
std::pair<double, double> mean_se(std::span<const double> values) {
  const double n = static_cast<double>(values.size());
  double mean = 0.0;
  for (double v : values) mean += v;
  mean /= n;
  if (values.size() < 2) return {mean, 0.0};
  double squares = 0.0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return {mean, std::sqrt(squares / (n - 1.0) / n)};
}

}  // namespace

PairedStat paired_stat(std::span<const double> a, std::span<const double> b) {
  ZEUS_CHECK(a.size() == b.size() && !a.empty(), "paired_stat needs two equal, non-empty samples");
  std::vector<double> diff(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) diff[i] = a[i] - b[i];
  PairedStat s;
  std::tie(s.mean_a, s.se_a) = mean_se(a);
  std::tie(s.mean_b, s.se_b) = mean_se(b);
  std::tie(s.mean_diff, s.se_diff) = mean_se(diff);
  return s;
}

Result<CompareResult> run_compare(const CompareOptions& options) {
  const ExperimentOptions& ex = options.experiment;
  if (ex.seeds < 1) return fail(ErrorCode::kInvalidArgument, "seeds must be >= 1");
  ZEUS_TRY(validate_options(ex.sim));
  auto traces = load_workload_traces(ex.data_dir, ex.gpu, ex.workloads);
  if (!traces) return fail(traces.error());
  CompareResult result;
  result.gpu = ex.gpu;
  result.eta = ex.sim.eta;
  result.beta = ex.sim.beta;
  result.seeds = ex.seeds;
  result.a_label = options.a_label;
  result.b_label = options.b_label;
  result.a_rules = zeus_rules_text(options.a);
  result.b_rules = zeus_rules_text(options.b);
  const int total = static_cast<int>(traces->size()) * ex.seeds;
  int base = 0;
  for (const WorkloadTrace& trace : *traces) {
    const double oracle_cost_j = oracle_optimum(trace, ex.sim.eta).cost_j;
    const std::size_t n = static_cast<std::size_t>(ex.seeds);
    std::vector<SeedTotals> base_totals(n), a_totals(n), b_totals(n);
    std::vector<Error> errors(n);
    std::vector<char> failed(n, 0);
    parallel_for(
        ex.seeds, ex.threads,
        [&](int s) {
          SimOptions sim = ex.sim;
          sim.seed = ex.sim.seed + static_cast<uint64_t>(s);
          const std::size_t i = static_cast<std::size_t>(s);
          auto baseline = simulate(trace, PolicyKind::kDefault, sim);
          sim.zeus = options.a;
          auto a = simulate(trace, PolicyKind::kZeus, sim);
          sim.zeus = options.b;
          auto b = simulate(trace, PolicyKind::kZeus, sim);
          if (!baseline || !a || !b) {
            failed[i] = 1;
            errors[i] = !baseline ? baseline.error() : !a ? a.error() : b.error();
            return;
          }
          base_totals[i] = seed_totals(*baseline, oracle_cost_j);
          a_totals[i] = seed_totals(*a, oracle_cost_j);
          b_totals[i] = seed_totals(*b, oracle_cost_j);
        },
        ex.progress, base, total);
    base += ex.seeds;
    for (std::size_t i = 0; i < n; ++i) {
      if (failed[i]) return fail(errors[i]);
    }
    std::vector<double> ea(n), eb(n), ra(n), rb(n), la(n), lb(n);
    for (std::size_t i = 0; i < n; ++i) {
      ea[i] = a_totals[i].energy_j / base_totals[i].energy_j;
      eb[i] = b_totals[i].energy_j / base_totals[i].energy_j;
      ra[i] = a_totals[i].regret_j;
      rb[i] = b_totals[i].regret_j;
      la[i] = a_totals[i].last5_energy_j / base_totals[i].last5_energy_j;
      lb[i] = b_totals[i].last5_energy_j / base_totals[i].last5_energy_j;
    }
    WorkloadComparison w;
    w.name = trace.workload.name;
    w.recurrences = recurrences_for(trace, ex.sim);
    w.cum_energy_ratio = paired_stat(ea, eb);
    w.cum_regret_j = paired_stat(ra, rb);
    w.last5_energy_ratio = paired_stat(la, lb);
    result.mean_relative_regret_diff += w.cum_regret_j.mean_diff / w.cum_regret_j.mean_b;
    result.workloads.push_back(std::move(w));
  }
  if (!result.workloads.empty()) result.mean_relative_regret_diff /= static_cast<double>(result.workloads.size());
  return result;
}

std::string format_compare_table(const CompareResult& r) {
  std::string out;
  appendf(out, "compare: gpu %s, eta %.2f, beta %.2f, %d paired seed(s)\n", r.gpu.c_str(), r.eta, r.beta, r.seeds);
  appendf(out, "  A = %s: %s\n  B = %s: %s\n", r.a_label.c_str(), r.a_rules.c_str(), r.b_label.c_str(),
          r.b_rules.c_str());
  appendf(out, "%-13s %-22s %-22s %-24s %8s\n", "workload", "cum_energy_ratio A", "cum_energy_ratio B",
          "A - B", "");
  for (const WorkloadComparison& w : r.workloads) {
    const PairedStat& e = w.cum_energy_ratio;
    appendf(out, "%-13s %9.4f ± %-10.4f %9.4f ± %-10.4f %+9.4f ± %-12.4f\n", w.name.c_str(), e.mean_a, e.se_a,
            e.mean_b, e.se_b, e.mean_diff, e.se_diff);
  }
  appendf(out, "%-13s %-22s %-22s %-24s %8s\n", "workload", "cum_regret_MJ A", "cum_regret_MJ B", "A - B (MJ)",
          "A/B - 1");
  for (const WorkloadComparison& w : r.workloads) {
    const PairedStat& g = w.cum_regret_j;
    appendf(out, "%-13s %9.3f ± %-10.3f %9.3f ± %-10.3f %+9.3f ± %-12.3f %+7.1f%%\n", w.name.c_str(), g.mean_a / 1e6,
            g.se_a / 1e6, g.mean_b / 1e6, g.se_b / 1e6, g.mean_diff / 1e6, g.se_diff / 1e6,
            100.0 * g.mean_diff / g.mean_b);
  }
  appendf(out, "%-13s %-22s %-22s %-24s\n", "workload", "last5_energy_ratio A", "last5_energy_ratio B", "A - B");
  for (const WorkloadComparison& w : r.workloads) {
    const PairedStat& l = w.last5_energy_ratio;
    appendf(out, "%-13s %9.4f ± %-10.4f %9.4f ± %-10.4f %+9.4f ± %-12.4f\n", w.name.c_str(), l.mean_a, l.se_a,
            l.mean_b, l.se_b, l.mean_diff, l.se_diff);
  }
  appendf(out, "regret A against B, mean over workloads: %+.1f%%\n", 100.0 * r.mean_relative_regret_diff);
  out += "mean ± standard error over seeds; A − B paired per seed (± its standard error)\n";
  return out;
}

}  // namespace zeus::sim
