// The sweeps (zeus/sim/sim_sweeps.h): one headline run per variant, Zeus's numbers extracted.
#include <algorithm>
#include <cstdio>
#include <functional>

#include "sim/appendf.h"
#include "zeus/sim/sim_sweeps.h"

namespace zeus::sim {
namespace {

struct Variant {
  std::string label;
  double value = 0.0;
  ExperimentOptions options;
};

const PolicyHeadline& policy_of(const WorkloadHeadline& w, PolicyKind kind) {
  for (const PolicyHeadline& p : w.policies) {
    if (p.policy == kind) return p;
  }
  ZEUS_CHECK(false, "the headline holds every policy");
  return w.policies.front();
}

SweepCell cell_of(const Variant& variant, const WorkloadHeadline& w) {
  const PolicyHeadline& zeus = policy_of(w, PolicyKind::kZeus);
  SweepCell c;
  c.variant = variant.label;
  c.value = variant.value;
  c.cum_energy_ratio = zeus.cum_energy_ratio;
  c.cum_time_ratio = zeus.cum_time_ratio;
  c.last5_energy_ratio = zeus.last5_energy_ratio;
  c.last5_time_ratio = zeus.last5_time_ratio;
  c.cum_regret_j = zeus.cum_regret_j;
  c.grid_cum_regret_j = policy_of(w, PolicyKind::kGridSearch).cum_regret_j;
  const int last = std::min(5, w.recurrences);
  c.last5_eta_j = Stat{zeus.last5_energy_j.mean / last, zeus.last5_energy_j.stddev / last};
  c.last5_tta_s = Stat{zeus.last5_time_s.mean / last, zeus.last5_time_s.stddev / last};
  c.oracle_eta_j = w.oracle.energy_j;
  c.oracle_tta_s = w.oracle.time_s;
  c.converged_batch_size = zeus.converged_batch_size;
  c.converged_power_limit_w = zeus.converged_power_limit_w;
  return c;
}

Result<SweepResult> run_variants(const ExperimentOptions& options, SweepResult result,
                                 const std::vector<Variant>& variants) {
  if (variants.empty()) return fail(ErrorCode::kInvalidArgument, result.experiment + " needs at least one variant");
  result.eta = options.sim.eta;
  result.beta = options.sim.beta;
  result.seeds = options.seeds;
  // Check every variant before simulating any, so a bad one fails at once.
  for (const Variant& v : variants) {
    if (v.options.seeds < 1) return fail(ErrorCode::kInvalidArgument, "seeds must be >= 1");
    ZEUS_TRY(validate_options(v.options.sim));
  }
  const int n = static_cast<int>(variants.size());
  for (int i = 0; i < n; ++i) {
    ExperimentOptions run = variants[static_cast<std::size_t>(i)].options;
    if (options.progress) {
      run.progress = [&options, i, n](int done, int total) { options.progress(i * total + done, n * total); };
    }
    auto headline = run_headline(run);
    if (!headline) return fail(headline.error());
    result.variants.push_back(variants[static_cast<std::size_t>(i)].label);
    for (std::size_t k = 0; k < headline->workloads.size(); ++k) {
      if (i == 0) result.workloads.push_back(SweepWorkload{headline->workloads[k].name, {}});
      result.workloads[k].cells.push_back(cell_of(variants[static_cast<std::size_t>(i)], headline->workloads[k]));
    }
  }
  return result;
}

std::string label(double value, int digits) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

// One variant per value of a numeric option, set by `set`; each is checked by run_variants().
Result<SweepResult> numeric_sweep(const ExperimentOptions& options, const char* experiment, const char* parameter,
                                  const std::vector<double>& values, void (*set)(SimOptions&, double)) {
  std::vector<Variant> variants;
  for (double value : values) {
    Variant v{label(value, 2), value, options};
    set(v.options.sim, value);
    variants.push_back(std::move(v));
  }
  SweepResult result;
  result.experiment = experiment;
  result.parameter = parameter;
  result.gpu = options.gpu;
  return run_variants(options, std::move(result), variants);
}

}  // namespace

Result<SweepResult> run_eta_sweep(const ExperimentOptions& options, std::vector<double> etas) {
  if (etas.empty()) {
    for (int i = 0; i <= 10; ++i) etas.push_back(i / 10.0);
  }
  return numeric_sweep(options, "eta-sweep", "eta", etas, [](SimOptions& sim, double eta) { sim.eta = eta; });
}

Result<SweepResult> run_beta_sweep(const ExperimentOptions& options, std::vector<double> betas) {
  if (betas.empty()) {
    for (int i = 3; i <= 10; ++i) betas.push_back(i / 2.0);
  }
  return numeric_sweep(options, "beta-sweep", "beta", betas, [](SimOptions& sim, double beta) { sim.beta = beta; });
}

Result<SweepResult> run_ablation(const ExperimentOptions& options) {
  struct Switches {
    const char* label;
    bool early_stopping, pruning, jit_profiling;
  };
  const Switches kAblations[] = {{"Zeus", true, true, true},
                                 {"no early stop", false, true, true},
                                 {"no pruning", true, false, true},
                                 {"no JIT profiling", true, true, false},
                                 {"none of the three", false, false, false}};
  std::vector<Variant> variants;
  for (const Switches& s : kAblations) {
    Variant v{s.label, 0.0, options};
    v.options.sim.early_stopping = s.early_stopping;
    v.options.sim.pruning = s.pruning;
    v.options.sim.jit_profiling = s.jit_profiling;
    variants.push_back(std::move(v));
  }
  SweepResult result;
  result.experiment = "ablation";
  result.parameter = "variant";
  result.gpu = options.gpu;
  return run_variants(options, std::move(result), variants);
}

Result<SweepResult> run_gpus(const ExperimentOptions& options, std::vector<std::string> gpus) {
  if (gpus.empty()) gpus = known_gpus();
  std::vector<Variant> variants;
  SweepResult result;
  result.experiment = "gpus";
  result.parameter = "gpu";
  for (const std::string& gpu : gpus) {
    Variant v{gpu, 0.0, options};
    v.options.gpu = gpu;
    variants.push_back(std::move(v));
    result.gpu += (result.gpu.empty() ? "" : ",") + gpu;
  }
  return run_variants(options, std::move(result), variants);
}

std::string format_sweep_table(const SweepResult& r) {
  std::string out;
  appendf(out, "%s: gpu %s, eta %.2f, beta %.2f, %d seed(s); Zeus against Default\n",
          r.experiment.c_str(), r.gpu.c_str(), r.eta, r.beta, r.seeds);
  appendf(out, "%-14s %-18s %10s %8s %11s %9s %10s %10s %10s %9s %9s  %s\n", "workload",
          r.parameter.c_str(), "cum_energy", "cum_time", "last5_energy", "last5_time", "regret_MJ",
          "grid_MJ", "ETA_kJ", "TTA_s", "oracle_kJ", "converged (b, W)");
  for (const SweepWorkload& w : r.workloads) {
    for (const SweepCell& c : w.cells) {
      appendf(
          out,
          "%-14s %-18s %10.3f %8.3f %11.3f %9.3f %10.3f %10.3f %10.1f %9.0f %9.1f  (%d, %.0f)\n",
          w.name.c_str(), c.variant.c_str(), c.cum_energy_ratio.mean, c.cum_time_ratio.mean,
          c.last5_energy_ratio.mean, c.last5_time_ratio.mean, c.cum_regret_j.mean / 1e6,
          c.grid_cum_regret_j.mean / 1e6, c.last5_eta_j.mean / 1e3, c.last5_tta_s.mean,
          c.oracle_eta_j / 1e3, c.converged_batch_size, c.converged_power_limit_w);
    }
  }
  out += "ratios: Zeus / Default, mean over seeds; regret: cumulative against the Oracle (grid_MJ: Grid Search's);\n"
         "ETA_kJ, TTA_s: Zeus's energy and time per recurrence over the last five; oracle_kJ: the Oracle's expected ETA\n";
  return out;
}

}  // namespace zeus::sim
