// The headline experiment (paper Fig. 6/7): every policy on every workload over several seeds.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>

#include "sim/appendf.h"
#include "sim/parallel.h"
#include "zeus/sim/sim_experiments.h"

namespace zeus::sim {
namespace {

struct Totals {
  double last5_energy_j = 0.0, last5_time_s = 0.0, energy_j = 0.0, time_s = 0.0, regret_j = 0.0;
  HistoryCharge carbon, cost;  // with accounting
};

// The seeds' amounts under one provider: unknown when any seed's is.
AccountedStat accounted_stat_of(const std::vector<Totals>& seeds, HistoryCharge Totals::*field) {
  AccountedStat out;
  std::vector<double> amounts;
  for (const Totals& t : seeds) {
    const HistoryCharge& charge = t.*field;
    if (!charge.complete && out.complete) {
      out.complete = false;
      out.unknown_reason = charge.unknown_reason;
    }
    amounts.push_back(charge.amount);
  }
  if (out.complete) out.amount = stat_of(amounts);
  return out;
}

// "123.456" or "unknown" (the reason is listed under the table).
std::string amount_text(const std::optional<AccountedStat>& a, int digits) {
  if (!a) return "-";
  if (!a->complete) return "unknown";
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, a->amount.mean);
  return text;
}

// One seed's totals; regret_curve[i] = regret after recurrence i.
Totals totals_of(const History& history, double oracle_cost_j, std::vector<double>* regret_curve) {
  Totals t;
  const std::size_t n = history.recurrences.size();
  const std::size_t last5_begin = n > 5 ? n - 5 : 0;
  regret_curve->assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const RecurrenceRecord& r = history.recurrences[i];
    t.energy_j += r.energy_j;
    t.time_s += r.time_s;
    t.regret_j += r.cost_j - oracle_cost_j;
    (*regret_curve)[i] = t.regret_j;
    if (i >= last5_begin) {
      t.last5_energy_j += r.energy_j;
      t.last5_time_s += r.time_s;
    }
  }
  return t;
}

}  // namespace

Stat stat_of(const std::vector<double>& values) {
  Stat s;
  if (values.empty()) return s;
  for (double v : values) s.mean += v;
  s.mean /= static_cast<double>(values.size());
  for (double v : values) s.stddev += (v - s.mean) * (v - s.mean);
  s.stddev = std::sqrt(s.stddev / static_cast<double>(values.size()));
  return s;
}

Result<HeadlineResult> run_headline(const ExperimentOptions& options) {
  if (options.seeds < 1) return fail(ErrorCode::kInvalidArgument, "seeds must be >= 1");
  ZEUS_TRY(validate_options(options.sim));
  auto traces = load_workload_traces(options.data_dir, options.gpu, options.workloads);
  if (!traces) return fail(traces.error());

  HeadlineResult result;
  result.gpu = options.gpu;
  result.eta = options.sim.eta;
  result.beta = options.sim.beta;
  result.seeds = options.seeds;
  result.first_seed = options.sim.seed;
  const ReplayAccounting& accounting = options.accounting;
  if (accounting.enabled()) {
    if (!accounting.scheduler) {
      return fail(ErrorCode::kInvalidArgument, "accounting needs a recurrence scheduler");
    }
    if (accounting.carbon) result.carbon_source = accounting.carbon->describe();
    if (accounting.price) result.price_source = accounting.price->describe();
    result.schedule = accounting.scheduler->describe();
  }
  std::mutex provider_mutex;  // providers answer one thread at a time
  const std::vector<PolicyKind>& policies = all_policies();
  const int total = static_cast<int>(traces->size() * policies.size()) * options.seeds;
  int done = 0;
  for (const WorkloadTrace& trace : *traces) {
    WorkloadHeadline w;
    w.name = trace.workload.name;
    w.recurrences = recurrences_for(trace, options.sim);
    w.default_batch_size = trace.workload.default_batch_size;
    w.max_power_limit_w = trace.power_limits_w.back();
    w.oracle = oracle_optimum(trace, options.sim.eta);
    w.oracle_batch_size = trace.batch_sizes[static_cast<std::size_t>(w.oracle.b)];
    w.oracle_power_limit_w = trace.power_limits_w[static_cast<std::size_t>(w.oracle.p)];
    w.oracle_all_paths = oracle_all_paths_optimum(trace, options.sim.eta);
    w.oracle_all_paths_batch_size = trace.batch_sizes[static_cast<std::size_t>(w.oracle_all_paths.b)];
    w.oracle_all_paths_power_limit_w = trace.power_limits_w[static_cast<std::size_t>(w.oracle_all_paths.p)];
    // totals[policy][seed]
    std::vector<std::vector<Totals>> totals(policies.size());
    for (std::size_t k = 0; k < policies.size(); ++k) {
      PolicyHeadline ph;
      ph.policy = policies[k];
      const std::size_t n = static_cast<std::size_t>(options.seeds);
      std::vector<std::vector<double>> curves(n);
      std::vector<std::pair<int, int>> last_configs(n);
      std::vector<Error> errors(n);
      std::vector<char> failed(n, 0);
      totals[k].resize(n);
      parallel_for(
          options.seeds, options.threads,
          [&](int s) {
            const std::size_t i = static_cast<std::size_t>(s);
            SimOptions sim = options.sim;
            sim.seed = options.sim.seed + static_cast<uint64_t>(s);
            auto history = simulate(trace, policies[k], sim);
            if (!history) {
              failed[i] = 1;
              errors[i] = history.error();
              return;
            }
            totals[k][i] = totals_of(*history, w.oracle.cost_j, &curves[i]);
            if (accounting.enabled()) {
              std::lock_guard<std::mutex> lock(provider_mutex);
              if (accounting.carbon) {
                totals[k][i].carbon = charge_history(*history, *accounting.scheduler, *accounting.carbon);
              }
              if (accounting.price) {
                totals[k][i].cost = charge_history(*history, *accounting.scheduler, *accounting.price);
              }
            }
            last_configs[i] = {history->recurrences.back().b, history->recurrences.back().p};
          },
          options.progress, done, total);
      done += options.seeds;
      for (std::size_t i = 0; i < n; ++i) {
        if (failed[i]) return fail(errors[i]);
      }
      ph.mean_cum_regret_j.assign(static_cast<std::size_t>(w.recurrences), 0.0);
      std::map<std::pair<int, int>, int> last_config_count;
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t r = 0; r < ph.mean_cum_regret_j.size() && r < curves[i].size(); ++r) {
          ph.mean_cum_regret_j[r] += curves[i][r];
        }
        ++last_config_count[last_configs[i]];
      }
      for (double& v : ph.mean_cum_regret_j) v /= options.seeds;
      // The seeds' spread around that mean (sample standard deviation; 0 with one seed).
      ph.sd_cum_regret_j.assign(ph.mean_cum_regret_j.size(), 0.0);
      for (std::size_t r = 0; r < ph.sd_cum_regret_j.size() && n > 1; ++r) {
        double sum_sq = 0;
        for (std::size_t i = 0; i < n; ++i) {
          const double v = r < curves[i].size() ? curves[i][r] : 0.0;
          sum_sq += (v - ph.mean_cum_regret_j[r]) * (v - ph.mean_cum_regret_j[r]);
        }
        ph.sd_cum_regret_j[r] = std::sqrt(sum_sq / static_cast<double>(n - 1));
      }
      std::pair<int, int> mode = last_configs[0];
      for (const auto& [config, count] : last_config_count) {
        if (count > last_config_count[mode]) mode = config;
      }
      ph.converged_batch_size = trace.batch_sizes[static_cast<std::size_t>(mode.first)];
      ph.converged_power_limit_w = trace.power_limits_w[static_cast<std::size_t>(mode.second)];
      w.policies.push_back(std::move(ph));
    }
    // Ratios against Default of the same seed.
    for (std::size_t k = 0; k < policies.size(); ++k) {
      std::vector<double> l5e, l5t, ce, ct, regret, regret_paper, l5abs, l5time, energy;
      const double paper_offset_j = w.recurrences * (w.oracle_all_paths.cost_j - w.oracle.cost_j);
      for (int s = 0; s < options.seeds; ++s) {
        const Totals& mine = totals[k][static_cast<std::size_t>(s)];
        const Totals& base = totals[0][static_cast<std::size_t>(s)];
        l5e.push_back(mine.last5_energy_j / base.last5_energy_j);
        l5t.push_back(mine.last5_time_s / base.last5_time_s);
        ce.push_back(mine.energy_j / base.energy_j);
        ct.push_back(mine.time_s / base.time_s);
        regret.push_back(mine.regret_j);
        regret_paper.push_back(mine.regret_j - paper_offset_j);
        l5abs.push_back(mine.last5_energy_j);
        l5time.push_back(mine.last5_time_s);
        energy.push_back(mine.energy_j);
      }
      PolicyHeadline& ph = w.policies[k];
      ph.last5_energy_ratio = stat_of(l5e);
      ph.last5_time_ratio = stat_of(l5t);
      ph.cum_energy_ratio = stat_of(ce);
      ph.cum_time_ratio = stat_of(ct);
      ph.cum_regret_j = stat_of(regret);
      ph.cum_regret_vs_oracle_j = stat_of(regret_paper);
      ph.last5_energy_j = stat_of(l5abs);
      ph.last5_time_s = stat_of(l5time);
      ph.cum_energy_j = stat_of(energy);
      if (accounting.carbon) ph.carbon = accounted_stat_of(totals[k], &Totals::carbon);
      if (accounting.price) ph.cost = accounted_stat_of(totals[k], &Totals::cost);
    }
    result.workloads.push_back(std::move(w));
  }
  return result;
}

std::string format_headline_table(const HeadlineResult& result) {
  std::string out;
  appendf(out, "headline: gpu %s, eta %.2f, beta %.2f, %d seed(s) from %llu\n", result.gpu.c_str(),
          result.eta, result.beta, result.seeds,
          static_cast<unsigned long long>(result.first_seed));
  appendf(out, "%-14s %-17s %5s %12s %10s %12s %10s %14s  %s\n", "workload", "policy", "recur",
          "last5_energy", "last5_time", "cum_energy", "cum_time", "cum_regret_MJ",
          "converged (b, W)");
  for (const WorkloadHeadline& w : result.workloads) {
    for (const PolicyHeadline& p : w.policies) {
      appendf(out, "%-14s %-17s %5d %12.3f %10.3f %12.3f %10.3f %14.3f  (%d, %.0f)\n",
              w.name.c_str(), std::string(policy_name(p.policy)).c_str(), w.recurrences,
              p.last5_energy_ratio.mean, p.last5_time_ratio.mean, p.cum_energy_ratio.mean,
              p.cum_time_ratio.mean, p.cum_regret_j.mean / 1e6, p.converged_batch_size,
              p.converged_power_limit_w);
    }
  }
  out += "ratios: against Default, mean over seeds; cum_regret: sum of (cost - Oracle (expected)'s expected cost)\n";
  appendf(out, "\nZeus's gap to each Oracle (Oracle: best (b, p) whose every path reaches the target, the paper's;\n"
               "Oracle (expected): best expected cost over every (b, p), failed paths charged with a retry)\n");
  appendf(out, "%-14s %-13s %-13s %19s %19s %24s %24s\n", "workload", "Oracle (b,W)", "expected (b,W)",
          "last5_E / Oracle", "last5_E / expected", "cum_regret_MJ vs Oracle", "cum_regret_MJ vs expected");
  for (const WorkloadHeadline& w : result.workloads) {
    const PolicyHeadline* zeus = w.policy(PolicyKind::kZeus);
    const PolicyHeadline* oracle = w.policy(PolicyKind::kOracle);
    const PolicyHeadline* expected = w.policy(PolicyKind::kOracleExpected);
    if (!zeus || !oracle || !expected) continue;
    char paper[32], floor[32];
    std::snprintf(paper, sizeof paper, "(%d, %.0f)", w.oracle_all_paths_batch_size, w.oracle_all_paths_power_limit_w);
    std::snprintf(floor, sizeof floor, "(%d, %.0f)", w.oracle_batch_size, w.oracle_power_limit_w);
    appendf(out, "%-14s %-13s %-13s %19.4f %19.4f %24.3f %24.3f\n", w.name.c_str(), paper, floor,
            zeus->last5_energy_j.mean / oracle->last5_energy_j.mean,
            zeus->last5_energy_j.mean / expected->last5_energy_j.mean, zeus->cum_regret_vs_oracle_j.mean / 1e6,
            zeus->cum_regret_j.mean / 1e6);
  }
  if (result.accounted()) out += format_headline_accounting(result);
  return out;
}

std::string format_headline_accounting(const HeadlineResult& result) {
  std::string out = "\nCarbon and cost of all recurrences (recurrences start " + result.schedule + ")\n";
  if (!result.carbon_source.empty()) out += "carbon: " + result.carbon_source + "\n";
  if (!result.price_source.empty()) out += "price: " + result.price_source + "\n";
  appendf(out, "%-14s %-17s %14s %14s %12s\n", "workload", "policy", "cum_energy_MJ", "cum_gCO2eq", "cum_cost_$");
  std::vector<std::string> reasons;
  for (const WorkloadHeadline& w : result.workloads) {
    for (const PolicyHeadline& p : w.policies) {
      appendf(out, "%-14s %-17s %14.3f %14s %12s\n", w.name.c_str(), std::string(policy_name(p.policy)).c_str(),
              p.cum_energy_j.mean / 1e6, amount_text(p.carbon, 1).c_str(), amount_text(p.cost, 4).c_str());
      for (const auto* a : {&p.carbon, &p.cost}) {
        if (*a && !(*a)->complete &&
            std::find(reasons.begin(), reasons.end(), (*a)->unknown_reason) == reasons.end()) {
          reasons.push_back((*a)->unknown_reason);
        }
      }
    }
  }
  out += "mean over seeds; '-': not asked for\n";
  for (const std::string& reason : reasons) out += "unknown: " + reason + "\n";
  return out;
}

}  // namespace zeus::sim
