// The sweep reports (zeus/sim/sim_report.h): eta-sweep, beta-sweep, ablation, gpus.
#include <string>
#include <vector>

#include "sim/gnuplot_scripts.h"
#include "sim/report_writer.h"
#include "zeus/sim/sim_report.h"

namespace zeus::sim {
namespace {

using Rows = std::vector<std::vector<std::string>>;

std::string pm_scaled(const Stat& s, int digits, double scale = 1.0) {
  return fixed(s.mean / scale, digits) + " ± " + fixed(s.stddev / scale, digits);
}

// One chart of `value` for every workload and variant: lines over a numeric parameter, bars for
// named variants.
Result<void> metric_chart(ReportWriter& report, const SweepResult& r, const std::string& stem,
                          const std::string& title, const std::string& ylabel, double (*value)(const SweepCell&)) {
  const bool numeric = r.parameter == "eta" || r.parameter == "beta";
  Rows rows;
  if (numeric) {
    std::vector<std::string> header = {r.parameter};
    for (const SweepWorkload& w : r.workloads) header.push_back(w.name);
    for (std::size_t v = 0; v < r.variants.size(); ++v) {
      std::vector<std::string> row = {fixed(r.workloads.front().cells[v].value, 3)};
      for (const SweepWorkload& w : r.workloads) row.push_back(fixed(value(w.cells[v]), 6));
      rows.push_back(row);
    }
    return report.line_chart(stem, header, rows, title, r.parameter, ylabel);
  }
  std::vector<std::string> header = {"workload"};
  for (const std::string& v : r.variants) header.push_back(v);
  for (const SweepWorkload& w : r.workloads) {
    std::vector<std::string> row = {w.name};
    for (const SweepCell& c : w.cells) row.push_back(fixed(value(c), 6));
    rows.push_back(row);
  }
  return report.bar_chart(stem, header, rows, title, ylabel);
}

}  // namespace

Result<std::filesystem::path> write_sweep_report(const SweepResult& r, const std::filesystem::path& dir,
                                                 const ReportOptions& options) {
  auto created = ReportWriter::create(dir, options.gnuplot);
  if (!created) return fail(created.error());
  ReportWriter& report = *created;
  report.paragraph("Zeus against Default and the Oracle while " + r.parameter + " varies (" + r.experiment +
                   "), GPU " + r.gpu + ", eta " + fixed(r.eta, 2) + ", beta " + fixed(r.beta, 2) + " unless swept, " +
                   std::to_string(r.seeds) + " seed(s). Every variant is a full headline run: ratios are Zeus / "
                   "Default on the same seed, then mean ± standard deviation over seeds; regret is cumulative "
                   "against the Oracle's expected recurrence cost (MJ). ETA and TTA are Zeus's mean energy and "
                   "time per recurrence over the last five recurrences.");
  report.heading("Results");
  Rows rows, csv_rows;
  for (const SweepWorkload& w : r.workloads) {
    for (const SweepCell& c : w.cells) {
      rows.push_back({w.name, c.variant, pm_scaled(c.cum_energy_ratio, 3), pm_scaled(c.cum_time_ratio, 3), pm_scaled(c.last5_energy_ratio, 3),
                      pm_scaled(c.last5_time_ratio, 3), pm_scaled(c.cum_regret_j, 2, 1e6), pm_scaled(c.grid_cum_regret_j, 2, 1e6),
                      "(" + std::to_string(c.converged_batch_size) + ", " + fixed(c.converged_power_limit_w, 0) + " W)"});
      csv_rows.push_back({w.name, c.variant, fixed(c.value, 3), fixed(c.cum_energy_ratio.mean, 6),
                          fixed(c.cum_energy_ratio.stddev, 6), fixed(c.cum_time_ratio.mean, 6),
                          fixed(c.cum_time_ratio.stddev, 6), fixed(c.last5_energy_ratio.mean, 6),
                          fixed(c.last5_time_ratio.mean, 6), fixed(c.cum_regret_j.mean, 1),
                          fixed(c.cum_regret_j.stddev, 1), fixed(c.grid_cum_regret_j.mean, 1),
                          fixed(c.last5_eta_j.mean, 1), fixed(c.last5_tta_s.mean, 1), fixed(c.oracle_eta_j, 1),
                          fixed(c.oracle_tta_s, 1), std::to_string(c.converged_batch_size),
                          fixed(c.converged_power_limit_w, 0)});
    }
  }
  report.table({"workload", r.parameter, "cum. energy", "cum. time", "last-5 energy", "last-5 time",
                "Zeus regret (MJ)", "Grid Search regret (MJ)", "Zeus converged (b, p)"},
               rows);
  ZEUS_TRY(report.data_file(r.experiment + ".csv",
                            csv_text({"workload", "variant", "value", "cum_energy_ratio", "cum_energy_ratio_std",
                                      "cum_time_ratio", "cum_time_ratio_std", "last5_energy_ratio", "last5_time_ratio",
                                      "cum_regret_j", "cum_regret_j_std", "grid_cum_regret_j", "last5_eta_j",
                                      "last5_tta_s", "oracle_eta_j", "oracle_tta_s", "converged_batch_size",
                                      "converged_power_limit_w"},
                                     csv_rows)));
  report.paragraph("All numbers of this table: " + r.experiment + ".csv.");
  report.heading("Figures");
  ZEUS_TRY(metric_chart(report, r, "cum_energy", "Zeus's energy over all recurrences / Default's", "energy / Default",
                        [](const SweepCell& c) { return c.cum_energy_ratio.mean; }));
  ZEUS_TRY(metric_chart(report, r, "cum_time", "Zeus's time over all recurrences / Default's", "time / Default",
                        [](const SweepCell& c) { return c.cum_time_ratio.mean; }));
  ZEUS_TRY(metric_chart(report, r, "cum_regret", "Zeus's cumulative regret against the Oracle", "regret (MJ)",
                        [](const SweepCell& c) { return c.cum_regret_j.mean / 1e6; }));
  if (r.parameter == "eta") {
    report.heading("Energy-time trade-off (Fig. 11)");
    for (const SweepWorkload& w : r.workloads) {
      Rows points;
      for (const SweepCell& c : w.cells) {
        points.push_back({fixed(c.value, 3), fixed(c.last5_tta_s.mean, 3), fixed(c.last5_eta_j.mean, 3),
                          fixed(c.oracle_tta_s, 3), fixed(c.oracle_eta_j, 3)});
      }
      const std::string stem = "tradeoff_" + w.name;
      ZEUS_TRY(report.data_file(stem + ".csv",
                                csv_text({"eta", "zeus_tta_s", "zeus_eta_j", "oracle_tta_s", "oracle_eta_j"}, points)));
      ZEUS_TRY(report.figure(stem, tradeoff_script(stem, stem + ".csv", "TTA and ETA as eta varies, " + w.name),
                             "Zeus's (TTA, ETA) per eta (labels) and the Oracle's, " + w.name + " (data: " + stem +
                                 ".csv)"));
    }
  }
  return report.finish("Zeus simulation: " + r.experiment + " (" + r.gpu + ")");
}

}  // namespace zeus::sim
