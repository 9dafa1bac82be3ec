// The headline and pareto reports (zeus/sim/sim_report.h): tables, CSV data and gnuplot figures.
#include <algorithm>
#include <string>
#include <vector>

#include "sim/gnuplot_scripts.h"
#include "sim/report_writer.h"
#include "zeus/sim/sim_report.h"

namespace zeus::sim {
namespace {

using Rows = std::vector<std::vector<std::string>>;

std::string pm(const Stat& s, int digits) { return fixed(s.mean, digits) + " ± " + fixed(s.stddev, digits); }

std::vector<std::string> policy_header(const std::string& first) {
  std::vector<std::string> header = {first};
  for (PolicyKind kind : all_policies()) header.emplace_back(policy_name(kind));
  return header;
}

// One CSV row per workload with one column per policy, from `value`.
template <typename F>
Rows per_policy_rows(const HeadlineResult& r, F value) {
  Rows rows;
  for (const WorkloadHeadline& w : r.workloads) {
    std::vector<std::string> row = {w.name};
    for (const PolicyHeadline& p : w.policies) row.push_back(fixed(value(p), 6));
    rows.push_back(row);
  }
  return rows;
}

Result<void> bars(ReportWriter& report, const HeadlineResult& r, const std::string& stem, const std::string& title,
                  const std::string& ylabel, double (*value)(const PolicyHeadline&)) {
  return report.bar_chart(stem, policy_header("workload"), per_policy_rows(r, value), title, ylabel);
}

// Bars of a per-seed statistic: its mean, with the standard deviation over seeds as error bars.
Result<void> bars_with_spread(ReportWriter& report, const HeadlineResult& r, const std::string& stem,
                              const std::string& title, const std::string& ylabel,
                              Stat (*stat)(const PolicyHeadline&)) {
  const Rows means = per_policy_rows(r, [stat](const PolicyHeadline& p) { return stat(p).mean; });
  Rows spreads = per_policy_rows(r, [stat](const PolicyHeadline& p) { return stat(p).stddev; });
  for (auto& row : spreads) row.erase(row.begin());  // the workload column
  return report.bar_chart(stem, policy_header("workload"), means, title, ylabel, &spreads);
}

// The amount's cell: "mean ± sd" or "unknown".
std::string amount_cell(const std::optional<AccountedStat>& a, int digits) {
  if (!a) return "-";
  return a->complete ? pm(a->amount, digits) : "unknown";
}

// With --carbon/--price: each policy's energy, gCO2eq and $ (table, CSV, bars when every amount
// of the provider is known) and the reasons of the unknown ones.
Result<void> accounting_section(ReportWriter& report, const HeadlineResult& r) {
  report.heading("Carbon and cost");
  std::string sources = "Recurrences start " + r.schedule + "; each run's energy is charged at constant power over its "
                        "span, interval by interval.";
  if (!r.carbon_source.empty()) sources += " Carbon intensity: " + r.carbon_source + ".";
  if (!r.price_source.empty()) sources += " Price: " + r.price_source + ".";
  report.paragraph(sources);
  Rows rows, csv_rows;
  std::vector<std::string> reasons;
  bool carbon_known = !r.carbon_source.empty(), cost_known = !r.price_source.empty();
  for (const WorkloadHeadline& w : r.workloads) {
    for (const PolicyHeadline& p : w.policies) {
      rows.push_back({w.name, std::string(policy_name(p.policy)),
                      pm(Stat{p.cum_energy_j.mean / 1e6, p.cum_energy_j.stddev / 1e6}, 3), amount_cell(p.carbon, 1),
                      amount_cell(p.cost, 4)});
      auto known = [](const std::optional<AccountedStat>& a) { return a && a->complete; };
      csv_rows.push_back({w.name, std::string(policy_name(p.policy)), fixed(p.cum_energy_j.mean, 1),
                          known(p.carbon) ? fixed(p.carbon->amount.mean, 3) : "",
                          known(p.cost) ? fixed(p.cost->amount.mean, 6) : ""});
      for (const auto* a : {&p.carbon, &p.cost}) {
        if (*a && !(*a)->complete &&
            std::find(reasons.begin(), reasons.end(), (*a)->unknown_reason) == reasons.end()) {
          reasons.push_back((*a)->unknown_reason);
        }
      }
      carbon_known = carbon_known && known(p.carbon);
      cost_known = cost_known && known(p.cost);
    }
  }
  report.table({"workload", "policy", "cum. energy (MJ)", "cum. gCO2eq", "cum. cost ($)"}, rows);
  ZEUS_TRY(report.data_file("accounting.csv",
                            csv_text({"workload", "policy", "cum_energy_j", "cum_gco2eq", "cum_cost"}, csv_rows)));
  report.paragraph("All numbers of this table: accounting.csv (an empty cell: unknown or not asked for).");
  for (const std::string& reason : reasons) report.paragraph("Unknown: " + reason + ".");
  if (carbon_known) {
    ZEUS_TRY(bars(report, r, "carbon_cumulative", "Carbon emissions over all recurrences", "gCO2eq",
                  [](const PolicyHeadline& p) { return p.carbon->amount.mean; }));
  }
  if (cost_known) {
    ZEUS_TRY(bars(report, r, "cost_cumulative", "Electricity cost over all recurrences", "$",
                  [](const PolicyHeadline& p) { return p.cost->amount.mean; }));
  }
  return ok();
}

}  // namespace

Result<std::filesystem::path> write_headline_report(const HeadlineResult& r, const std::filesystem::path& dir,
                                                    const ReportOptions& options) {
  auto created = ReportWriter::create(dir, options.gnuplot);
  if (!created) return fail(created.error());
  ReportWriter& report = *created;
  report.paragraph("Trace-driven replay of the Zeus paper's evaluation (§6) on the measured traces bundled in "
                   "data/ (ml-energy/zeus, Apache-2.0). GPU " + r.gpu + ", eta " + fixed(r.eta, 2) + ", beta " +
                   fixed(r.beta, 2) + ", " + std::to_string(r.seeds) + " seed(s) starting at " +
                   std::to_string(r.first_seed) + ". Ratios are against Default on the same seed, then mean ± "
                   "standard deviation over seeds. Two oracles know every path in advance and run one (b, p) every "
                   "recurrence: Oracle (the paper's comparison point, what an exhaustive grid search converges to) "
                   "takes the least expected cost among the (b, p) whose every training path reaches the target; "
                   "Oracle (expected) the least expected cost over every (b, p), a path that misses the target "
                   "counted as a full max_epochs run followed by a retry (expected cost = mean run cost / "
                   "P(reach)) — lower or equal. Cumulative regret is the sum over recurrences of (recurrence "
                   "cost − Oracle (expected)'s expected recurrence cost), in MJ; a recurrence's cost includes its "
                   "failed runs.");

  report.heading("Energy and time against Default");
  Rows rows;
  Rows csv_rows;
  for (const WorkloadHeadline& w : r.workloads) {
    for (const PolicyHeadline& p : w.policies) {
      const std::string config = "(" + std::to_string(p.converged_batch_size) + ", " + fixed(p.converged_power_limit_w, 0) + " W)";
      rows.push_back({w.name, std::string(policy_name(p.policy)), pm(p.last5_energy_ratio, 3), pm(p.last5_time_ratio, 3),
                      pm(p.cum_energy_ratio, 3), pm(p.cum_time_ratio, 3), pm(Stat{p.cum_regret_j.mean / 1e6, p.cum_regret_j.stddev / 1e6}, 2),
                      config});
      csv_rows.push_back({w.name, std::string(policy_name(p.policy)), std::to_string(w.recurrences),
                          fixed(p.last5_energy_ratio.mean, 6), fixed(p.last5_energy_ratio.stddev, 6),
                          fixed(p.last5_time_ratio.mean, 6), fixed(p.last5_time_ratio.stddev, 6),
                          fixed(p.cum_energy_ratio.mean, 6), fixed(p.cum_energy_ratio.stddev, 6),
                          fixed(p.cum_time_ratio.mean, 6), fixed(p.cum_time_ratio.stddev, 6),
                          fixed(p.cum_regret_j.mean, 1), fixed(p.cum_regret_j.stddev, 1),
                          std::to_string(p.converged_batch_size), fixed(p.converged_power_limit_w, 0)});
    }
  }
  report.table({"workload", "policy", "last-5 energy", "last-5 time", "cum. energy", "cum. time", "cum. regret (MJ)",
                "converged (b, p)"},
               rows);
  ZEUS_TRY(report.data_file("headline.csv",
                            csv_text({"workload", "policy", "recurrences", "last5_energy_ratio", "last5_energy_ratio_std",
                                      "last5_time_ratio", "last5_time_ratio_std", "cum_energy_ratio",
                                      "cum_energy_ratio_std", "cum_time_ratio", "cum_time_ratio_std", "cum_regret_j",
                                      "cum_regret_j_std", "converged_batch_size", "converged_power_limit_w"},
                                     csv_rows)));
  report.paragraph("All numbers of this table: headline.csv.");
  ZEUS_TRY(bars_with_spread(report, r, "energy_last5",
                            "Energy of the last five recurrences, relative to Default",
                            "energy / Default",
                            [](const PolicyHeadline& p) { return p.last5_energy_ratio; }));
  ZEUS_TRY(bars_with_spread(report, r, "time_last5",
                            "Time of the last five recurrences, relative to Default",
                            "time / Default",
                            [](const PolicyHeadline& p) { return p.last5_time_ratio; }));
  ZEUS_TRY(bars_with_spread(report, r, "energy_cumulative",
                            "Energy over all recurrences, relative to Default", "energy / Default",
                            [](const PolicyHeadline& p) { return p.cum_energy_ratio; }));
  if (r.accounted()) ZEUS_TRY(accounting_section(report, r));

  report.heading("Convergence: Zeus against each Oracle");
  Rows conv;
  for (const WorkloadHeadline& w : r.workloads) {
    const PolicyHeadline* zeus = w.policy(PolicyKind::kZeus);
    const PolicyHeadline* oracle = w.policy(PolicyKind::kOracle);
    const PolicyHeadline* expected = w.policy(PolicyKind::kOracleExpected);
    if (!zeus || !oracle || !expected) continue;
    const double ratio = zeus->last5_energy_j.mean / oracle->last5_energy_j.mean;
    const double ratio_expected = zeus->last5_energy_j.mean / expected->last5_energy_j.mean;
    conv.push_back({w.name,
                    "(" + std::to_string(w.oracle_all_paths_batch_size) + ", " +
                        fixed(w.oracle_all_paths_power_limit_w, 0) + " W)",
                    "(" + std::to_string(w.oracle_batch_size) + ", " + fixed(w.oracle_power_limit_w, 0) + " W)",
                    "(" + std::to_string(zeus->converged_batch_size) + ", " + fixed(zeus->converged_power_limit_w, 0) + " W)",
                    fixed(ratio, 3), ratio <= 1.03 ? "yes" : "no", fixed(ratio_expected, 3),
                    fixed(zeus->cum_regret_vs_oracle_j.mean / 1e6, 2), fixed(zeus->cum_regret_j.mean / 1e6, 2)});
  }
  report.table({"workload", "Oracle (b, p)", "Oracle (expected) (b, p)", "Zeus converged (b, p)",
                "Zeus / Oracle last-5 energy", "within 3 %", "Zeus / Oracle (expected) last-5 energy",
                "Zeus cum. regret vs Oracle (MJ)", "vs Oracle (expected) (MJ)"},
               conv);

  report.heading("Cumulative regret against Oracle (expected)");
  for (const WorkloadHeadline& w : r.workloads) {
    std::vector<std::vector<double>> curve;
    for (int i = 0; i < w.recurrences; ++i) {
      const auto r = static_cast<std::size_t>(i);
      std::vector<double> row = {static_cast<double>(i + 1)};
      for (const PolicyHeadline& p : w.policies) {
        row.push_back(p.mean_cum_regret_j[r] / 1e6);
        row.push_back(r < p.sd_cum_regret_j.size() ? p.sd_cum_regret_j[r] / 1e6 : 0.0);
      }
      curve.push_back(std::move(row));
    }
    ZEUS_TRY(report.band_chart("regret_" + w.name, policy_header("recurrence"), curve,
                               "Cumulative regret of " + w.name + ", mean over seeds", "recurrence",
                               "cumulative regret (MJ)"));
  }
  // Where exploring cost more than it earned back: said, not left for the reader to find.
  std::string above_default;
  for (const WorkloadHeadline& w : r.workloads) {
    const PolicyHeadline* zeus = w.policy(PolicyKind::kZeus);
    const PolicyHeadline* fallback = w.policy(PolicyKind::kDefault);
    if (!zeus || !fallback || zeus->cum_regret_j.mean <= fallback->cum_regret_j.mean) continue;
    above_default += std::string(above_default.empty() ? "" : "; ") + w.name + " (Zeus " +
                     fixed(zeus->cum_regret_j.mean / 1e6, 1) + " MJ, Default " +
                     fixed(fallback->cum_regret_j.mean / 1e6, 1) + " MJ over " +
                     std::to_string(w.recurrences) + " recurrences)";
  }
  if (!above_default.empty()) {
    report.paragraph(
        "Zeus's cumulative regret exceeds Default's on: " + above_default +
        ". Zeus pays for exploring: its first recurrences try batch sizes whose runs cost more "
        "than Default's, and where the best configuration saves little per recurrence against "
        "Default, the recurrences here are too few to earn that cost back (Zeus's curve stays above "
        "Default's; with more recurrences it crosses it). Its last-5 energy above shows where it "
        "converged.");
  }
  return report.finish("Zeus simulation: headline (" + r.gpu + ")");
}

Result<std::filesystem::path> write_pareto_report(const ParetoResult& r, const std::filesystem::path& dir,
                                                  const ReportOptions& options) {
  auto created = ReportWriter::create(dir, options.gnuplot);
  if (!created) return fail(created.error());
  ReportWriter& report = *created;
  report.paragraph("Every (batch size, power limit) of each workload on " + r.gpu +
                   " as expected time and energy to accuracy per recurrence (a training path that misses the "
                   "target costs a full run and a retry). The Pareto frontier, b0 at the maximum power limit and "
                   "the cost optimum at eta " + fixed(r.eta, 2) + " are marked.");
  const std::vector<std::string> header = {"batch_size", "power_limit_w", "tta_s", "eta_j", "cost_j",
                                           "reach_probability", "on_frontier", "is_default", "is_optimum"};
  for (const WorkloadPareto& w : r.workloads) {
    report.heading(w.name);
    Rows all, frontier, table;
    std::vector<ParetoPoint> front;
    for (const ParetoPoint& p : w.points) {
      std::vector<std::string> row = {std::to_string(p.batch_size), fixed(p.power_limit_w, 0), fixed(p.tta_s, 3),
                                      fixed(p.eta_j, 3), fixed(p.cost_j, 3), fixed(p.reach_probability, 3),
                                      p.on_frontier ? "1" : "0", p.is_default ? "1" : "0", p.is_optimum ? "1" : "0"};
      all.push_back(row);
      if (p.on_frontier) front.push_back(p);
      if (p.on_frontier || p.is_default || p.is_optimum) {
        table.push_back({std::to_string(p.batch_size), fixed(p.power_limit_w, 0), fixed(p.tta_s, 1),
                         fixed(p.eta_j / 1e3, 1), std::string(p.on_frontier ? "frontier " : "") +
                                                      (p.is_default ? "default " : "") + (p.is_optimum ? "optimum" : "")});
      }
    }
    std::sort(front.begin(), front.end(), [](const ParetoPoint& a, const ParetoPoint& b) { return a.tta_s < b.tta_s; });
    for (const ParetoPoint& p : front) {
      frontier.push_back({std::to_string(p.batch_size), fixed(p.power_limit_w, 0), fixed(p.tta_s, 3), fixed(p.eta_j, 3),
                          fixed(p.cost_j, 3), fixed(p.reach_probability, 3), "1", p.is_default ? "1" : "0",
                          p.is_optimum ? "1" : "0"});
    }
    const std::string stem = "pareto_" + w.name;
    ZEUS_TRY(report.data_file(stem + ".csv", csv_text(header, all)));
    ZEUS_TRY(report.data_file(stem + "_frontier.csv", csv_text(header, frontier)));
    ZEUS_TRY(report.figure(stem, pareto_script(stem, stem + ".csv", stem + "_frontier.csv", "TTA against ETA, " + w.name),
                           "Every (b, p) of " + w.name + " (data: " + stem + ".csv)"));
    report.table({"batch size", "limit (W)", "TTA (s)", "ETA (kJ)", "mark"}, table);

    // ETA against batch size (least over power limits, and at the maximum limit).
    std::vector<int> sizes;
    for (const ParetoPoint& p : w.points) {
      if (std::find(sizes.begin(), sizes.end(), p.batch_size) == sizes.end()) sizes.push_back(p.batch_size);
    }
    double max_limit = 0.0;
    for (const ParetoPoint& p : w.points) max_limit = std::max(max_limit, p.power_limit_w);
    Rows by_batch;
    for (int b : sizes) {
      double best = 1e300, at_max = 1e300;
      for (const ParetoPoint& p : w.points) {
        if (p.batch_size != b) continue;
        best = std::min(best, p.eta_j);
        if (p.power_limit_w == max_limit) at_max = p.eta_j;
      }
      by_batch.push_back({std::to_string(b), fixed(best / 1e3, 3), at_max < 1e300 ? fixed(at_max / 1e3, 3) : "NaN"});
    }
    ZEUS_TRY(report.line_chart("eta_vs_batch_" + w.name, {"batch_size", "best power limit", "max power limit"},
                               by_batch, "ETA against batch size, " + w.name, "batch size", "ETA (kJ)", true));
    // ETA against power limit for every batch size: one column per batch size.
    std::vector<double> limits;
    for (const ParetoPoint& p : w.points) {
      if (std::find(limits.begin(), limits.end(), p.power_limit_w) == limits.end()) limits.push_back(p.power_limit_w);
    }
    std::sort(limits.begin(), limits.end());
    std::vector<std::string> pheader = {"power_limit_w"};
    for (int b : sizes) pheader.push_back("b=" + std::to_string(b));
    Rows by_limit;
    for (double limit : limits) {
      std::vector<std::string> row = {fixed(limit, 0)};
      for (int b : sizes) {
        std::string cell = "NaN";
        for (const ParetoPoint& p : w.points) {
          if (p.batch_size == b && p.power_limit_w == limit) cell = fixed(p.eta_j / 1e3, 3);
        }
        row.push_back(cell);
      }
      by_limit.push_back(row);
    }
    ZEUS_TRY(report.line_chart("eta_vs_power_" + w.name, pheader, by_limit,
                               "ETA against power limit per batch size, " + w.name, "power limit (W)", "ETA (kJ)"));
  }
  return report.finish("Zeus simulation: Pareto (" + r.gpu + ")");
}

}  // namespace zeus::sim
