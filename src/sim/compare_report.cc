// The report of `zeus simulate compare` (zeus/sim/sim_compare.h).
#include <string>
#include <vector>

#include "sim/report_writer.h"
#include "zeus/sim/sim_compare.h"

namespace zeus::sim {
namespace {

std::string pm(double mean, double se, int digits) { return fixed(mean, digits) + " ± " + fixed(se, digits); }

}  // namespace

Result<std::filesystem::path> write_compare_report(const CompareResult& r, const std::filesystem::path& dir,
                                                   const ReportOptions& options) {
  auto created = ReportWriter::create(dir, options.gnuplot);
  if (!created) return fail(created.error());
  ReportWriter& report = *created;
  report.paragraph("Two configurations of the Zeus policy on the same " + std::to_string(r.seeds) +
                   " seeds (GPU " + r.gpu + ", eta " + fixed(r.eta, 2) + ", beta " + fixed(r.beta, 2) +
                   "): A = " + r.a_label + " (" + r.a_rules + "), B = " + r.b_label + " (" + r.b_rules +
                   "). Each cell is the mean over seeds ± its standard error; A − B is paired per seed, so its "
                   "standard error excludes the training-path luck both share. Regret is against Oracle "
                   "(expected)'s expected cost, in MJ.");
  std::vector<std::vector<std::string>> rows, csv;
  for (const WorkloadComparison& w : r.workloads) {
    const PairedStat& g = w.cum_regret_j;
    const PairedStat& e = w.cum_energy_ratio;
    const PairedStat& l = w.last5_energy_ratio;
    rows.push_back({w.name, pm(g.mean_a / 1e6, g.se_a / 1e6, 3), pm(g.mean_b / 1e6, g.se_b / 1e6, 3),
                    pm(g.mean_diff / 1e6, g.se_diff / 1e6, 3), fixed(100.0 * g.mean_diff / g.mean_b, 1) + " %",
                    pm(e.mean_a, e.se_a, 4), pm(e.mean_b, e.se_b, 4), pm(e.mean_diff, e.se_diff, 4),
                    pm(l.mean_diff, l.se_diff, 4)});
    for (const auto& [metric, s] : {std::pair<std::string, const PairedStat*>{"cum_regret_j", &g},
                                    {"cum_energy_ratio", &e},
                                    {"last5_energy_ratio", &l}}) {
      csv.push_back({w.name, metric, fixed(s->mean_a, 6), fixed(s->se_a, 6), fixed(s->mean_b, 6), fixed(s->se_b, 6),
                     fixed(s->mean_diff, 6), fixed(s->se_diff, 6)});
    }
  }
  report.table({"workload", "regret A (MJ)", "regret B (MJ)", "A − B (MJ)", "A/B − 1", "cum. energy ratio A",
                "cum. energy ratio B", "A − B", "last-5 energy ratio A − B"},
               rows);
  report.paragraph("Regret of A against B, mean over workloads of (A − B)/B: " +
                   fixed(100.0 * r.mean_relative_regret_diff, 1) + " %.");
  ZEUS_TRY(report.data_file("compare.csv", csv_text({"workload", "metric", "mean_a", "se_a", "mean_b", "se_b",
                                                     "mean_diff", "se_diff"},
                                                    csv)));
  return report.finish("Zeus simulation: compare " + r.a_label + " against " + r.b_label + " (" + r.gpu + ")");
}

}  // namespace zeus::sim
