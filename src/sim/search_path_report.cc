// The search-path report (zeus/sim/sim_report.h): Fig. 8 — paths over a regret heat map.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sim/gnuplot_scripts.h"
#include "sim/report_writer.h"
#include "zeus/sim/sim_report.h"

namespace zeus::sim {

Result<std::filesystem::path> write_search_path_report(const SearchPathResult& r, const std::filesystem::path& dir,
                                                       const ReportOptions& options) {
  constexpr double kCap = 3.0;  // heat-map colours saturate here; unreachable configurations too
  auto created = ReportWriter::create(dir, options.gnuplot);
  if (!created) return fail(created.error());
  ReportWriter& report = *created;
  report.paragraph("The (batch size, power limit) that Grid Search and Zeus ran, run by run, over a heat map of each "
                   "configuration's expected recurrence cost relative to the Oracle's (1 = optimal; capped at " +
                   fixed(kCap, 0) + ", which also marks configurations that never reach the target). GPU " + r.gpu +
                   ", eta " + fixed(r.eta, 2) + ", beta " + fixed(r.beta, 2) + ", seed " + std::to_string(r.seed) +
                   ". Zeus profiles every power limit in the first epoch of a batch size and then runs at the chosen "
                   "one, so its path moves along batch sizes; Grid Search tries one (b, p) per recurrence.");
  for (const WorkloadSearchPath& w : r.workloads) {
    report.heading(w.name);
    std::vector<std::vector<std::string>> heat;
    for (std::size_t b = 0; b < w.batch_sizes.size(); ++b) {
      for (std::size_t p = 0; p < w.power_limits_w.size(); ++p) {
        const double ratio = w.regret_ratio[b][p];
        heat.push_back({std::to_string(b), std::to_string(p), fixed(std::isfinite(ratio) ? std::min(ratio, kCap) : kCap, 4)});
      }
    }
    const std::string stem = "search_path_" + w.name;
    ZEUS_TRY(report.data_file(stem + "_heat.csv", csv_text({"b_index", "p_index", "cost_over_oracle"}, heat)));
    std::vector<std::string> csvs, titles;
    std::vector<std::vector<std::string>> summary;
    for (const PolicyPath& path : w.paths) {
      const std::string name(policy_name(path.policy));
      std::vector<std::vector<std::string>> rows;
      int run = 0;
      for (const PathStep& step : path.steps) {
        const auto b = std::find(w.batch_sizes.begin(), w.batch_sizes.end(), step.batch_size) - w.batch_sizes.begin();
        const auto p = std::find(w.power_limits_w.begin(), w.power_limits_w.end(), step.power_limit_w) -
                       w.power_limits_w.begin();
        rows.push_back({std::to_string(++run), std::to_string(b), std::to_string(p), std::to_string(step.recurrence + 1),
                        std::to_string(step.batch_size), fixed(step.power_limit_w, 0), fixed(step.cost_j, 1),
                        step.reached ? "1" : "0", step.early_stopped ? "1" : "0", step.profiled ? "1" : "0"});
      }
      const std::string csv = stem + "_" + name + ".csv";
      ZEUS_TRY(report.data_file(csv, csv_text({"run", "b_index", "p_index", "recurrence", "batch_size", "power_limit_w",
                                               "cost_j", "reached", "early_stopped", "profiled"},
                                              rows)));
      csvs.push_back(csv);
      titles.push_back(name);
      summary.push_back({name, std::to_string(path.steps.size()), std::to_string(path.distinct_configurations),
                         path.steps.empty() ? "" : "(" + std::to_string(path.steps.back().batch_size) + ", " +
                                                       fixed(path.steps.back().power_limit_w, 0) + " W)"});
    }
    std::vector<std::string> x_labels, y_labels;
    for (int b : w.batch_sizes) x_labels.push_back(std::to_string(b));
    for (double p : w.power_limits_w) y_labels.push_back(fixed(p, 0));
    ZEUS_TRY(report.figure(stem,
                           heatmap_paths_script(stem, stem + "_heat.csv", csvs, titles, x_labels, y_labels,
                                                "Search paths over expected cost / Oracle, " + w.name,
                                                "expected cost / Oracle"),
                           "Search paths of " + w.name + "; Oracle (" + std::to_string(w.oracle_batch_size) + ", " +
                               fixed(w.oracle_power_limit_w, 0) + " W), b0 " + std::to_string(w.default_batch_size) +
                               " (data: " + stem + "_*.csv)"));
    report.table({"policy", "runs", "distinct (b, p)", "last (b, p)"}, summary);
  }
  return report.finish("Zeus simulation: search paths (" + r.gpu + ")");
}

}  // namespace zeus::sim
