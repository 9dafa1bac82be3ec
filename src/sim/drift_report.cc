// The drift report (zeus/sim/sim_report.h): regret curves and the batch size of each recurrence.
#include <string>
#include <vector>

#include "sim/report_writer.h"
#include "zeus/sim/sim_report.h"

namespace zeus::sim {

Result<std::filesystem::path> write_drift_report(const DriftResult& r, const std::filesystem::path& dir,
                                                 const ReportOptions& options) {
  auto created = ReportWriter::create(dir, options.gnuplot);
  if (!created) return fail(created.error());
  ReportWriter& report = *created;
  report.paragraph("A recurring " + r.workload + " job on " + r.gpu + " whose target metric is raised between phases, "
                   "so its best batch size shifts (data drift, paper §6.4). Zeus keeps every cost it observed; "
                   "\"Zeus (window " + std::to_string(r.window_size) + ")\" lets only each batch size's newest " +
                   std::to_string(r.window_size) + " costs count (the batch-size optimizer's window_size). Regret is "
                   "against the Oracle of each phase. eta " + fixed(r.eta, 2) + ", beta " + fixed(r.beta, 2) + ", " +
                   std::to_string(r.seeds) + " seed(s), mean ± standard deviation.");
  std::vector<std::vector<std::string>> phases;
  for (std::size_t k = 0; k < r.phases.size(); ++k) {
    const DriftPhase& p = r.phases[k];
    phases.push_back({std::to_string(k + 1), fixed(p.target_metric, 3),
                      std::to_string(p.first_recurrence + 1) + "–" + std::to_string(p.first_recurrence + p.recurrences),
                      "(" + std::to_string(p.oracle_batch_size) + ", " + fixed(p.oracle_power_limit_w, 0) + " W)",
                      fixed(p.oracle_cost_j / 1e3, 1)});
  }
  report.table({"phase", "target metric", "recurrences", "Oracle (b, p)", "Oracle cost (kJ)"}, phases);
  std::vector<std::vector<std::string>> rows, csv_rows;
  for (const DriftPolicy& p : r.policies) {
    rows.push_back({p.name, fixed(p.cum_regret_j.mean / 1e6, 2) + " ± " + fixed(p.cum_regret_j.stddev / 1e6, 2),
                    fixed(p.last_phase_energy_ratio.mean, 3) + " ± " + fixed(p.last_phase_energy_ratio.stddev, 3),
                    fixed(p.last_phase_regret_j.mean / 1e6, 2), fixed(p.last_phase_optimal_share.mean, 2),
                    fixed(p.failed_recurrences.mean, 1)});
    csv_rows.push_back({p.name, fixed(p.cum_regret_j.mean, 1), fixed(p.cum_regret_j.stddev, 1),
                        fixed(p.last_phase_energy_ratio.mean, 6), fixed(p.last_phase_regret_j.mean, 1),
                        fixed(p.last_phase_optimal_share.mean, 4), fixed(p.failed_recurrences.mean, 2)});
  }
  report.table({"policy", "cum. regret (MJ)", "last-phase energy / Default", "last-phase regret (MJ)",
                "optimal b share (last quarter)", "failed recurrences"},
               rows);
  ZEUS_TRY(report.data_file("drift.csv", csv_text({"policy", "cum_regret_j", "cum_regret_j_std", "last_phase_energy_ratio",
                                                   "last_phase_regret_j", "last_phase_optimal_share", "failed_recurrences"},
                                                  csv_rows)));
  std::vector<std::string> header = {"recurrence"};
  for (const DriftPolicy& p : r.policies) header.push_back(p.name);
  std::vector<std::vector<std::string>> regret, sizes, shares;
  const std::size_t n = r.policies.front().mean_cum_regret_j.size();
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::string> row = {std::to_string(i + 1)};
    std::vector<std::string> size_row = {std::to_string(i + 1)};
    std::vector<std::string> share_row = {std::to_string(i + 1)};
    for (const DriftPolicy& p : r.policies) {
      row.push_back(fixed(p.mean_cum_regret_j[i] / 1e6, 6));
      size_row.push_back(std::to_string(p.first_seed_batch_sizes[i]));
      share_row.push_back(fixed(p.optimal_share_curve[i], 4));
    }
    regret.push_back(row);
    sizes.push_back(size_row);
    shares.push_back(share_row);
  }
  ZEUS_TRY(report.line_chart("drift_regret", header, regret, "Cumulative regret under drift, mean over seeds",
                             "recurrence", "cumulative regret (MJ)"));
  ZEUS_TRY(report.line_chart("drift_optimal_share", header, shares,
                             "Share of seeds at the current phase's optimal batch size", "recurrence", "share"));
  ZEUS_TRY(report.line_chart("drift_batch_size", header, sizes, "Batch size of each recurrence (first seed)",
                             "recurrence", "batch size"));
  return report.finish("Zeus simulation: drift (" + r.workload + ", " + r.gpu + ")");
}

}  // namespace zeus::sim
