// The concurrent-submissions report (zeus/sim/sim_report.h).
#include <string>
#include <vector>

#include "sim/report_writer.h"
#include "zeus/sim/sim_report.h"

namespace zeus::sim {
namespace {

using Rows = std::vector<std::vector<std::string>>;

// Bars per workload, one series per overlap.
Result<void> overlap_chart(ReportWriter& report, const ConcurrentResult& r, const std::string& stem,
                           const std::string& title, const std::string& ylabel, double (*value)(const ConcurrentCell&)) {
  std::vector<std::string> header = {"workload"};
  for (double o : r.overlaps) header.push_back("overlap " + fixed(o, 1));
  Rows rows;
  for (const ConcurrentWorkload& w : r.workloads) {
    std::vector<std::string> row = {w.name};
    for (const ConcurrentCell& c : w.cells) row.push_back(fixed(value(c), 6));
    rows.push_back(row);
  }
  return report.bar_chart(stem, header, rows, title, ylabel);
}

}  // namespace

Result<std::filesystem::path> write_concurrent_report(const ConcurrentResult& r, const std::filesystem::path& dir,
                                                      const ReportOptions& options) {
  auto created = ReportWriter::create(dir, options.gnuplot);
  if (!created) return fail(created.error());
  ReportWriter& report = *created;
  report.paragraph("Recurrences of one job that overlap in time (paper §4.4, §6.3). Submissions arrive as a Poisson "
                   "process drawn from the seed, with mean inter-arrival D / overlap, D being Default's expected "
                   "recurrence time; a submission plans its run on arrival, seeing only runs that already ended. "
                   "Runs in flight are dispatched trials for the batch-size optimizer: during pruning a concurrent "
                   "request gets the best batch size known so far; afterwards Thompson sampling draws, spreading "
                   "concurrent submissions over plausible batch sizes. (The paper replayed the Alibaba GPU trace, "
                   "which is not bundled.) GPU " + r.gpu + ", eta " + fixed(r.eta, 2) + ", beta " + fixed(r.beta, 2) +
                   ", " + std::to_string(r.seeds) + " seed(s).");
  Rows rows, csv_rows;
  for (const ConcurrentWorkload& w : r.workloads) {
    for (const ConcurrentCell& c : w.cells) {
      rows.push_back({w.name, fixed(c.overlap, 1), fixed(c.in_flight.mean, 2), fixed(c.distinct_in_flight.mean, 2),
                      fixed(c.cum_energy_ratio.mean, 3), fixed(c.cum_time_ratio.mean, 3),
                      fixed(c.cum_regret_j.mean / 1e6, 2), fixed(c.sequential_regret_j.mean / 1e6, 2),
                      fixed(c.concurrent_pruning_answers.mean, 1)});
      csv_rows.push_back({w.name, std::to_string(w.submissions), fixed(w.default_duration_s, 1), fixed(c.overlap, 3),
                          fixed(c.in_flight.mean, 4), fixed(c.distinct_in_flight.mean, 4),
                          fixed(c.cum_energy_ratio.mean, 6), fixed(c.cum_time_ratio.mean, 6),
                          fixed(c.cum_regret_j.mean, 1), fixed(c.sequential_regret_j.mean, 1),
                          fixed(c.concurrent_pruning_answers.mean, 2), fixed(c.makespan_s.mean, 1)});
    }
  }
  report.table({"workload", "overlap", "runs in flight", "distinct b in flight", "energy / Default", "time / Default",
                "regret (MJ)", "one at a time (MJ)", "best-known answers"},
               rows);
  ZEUS_TRY(report.data_file("concurrent.csv",
                            csv_text({"workload", "submissions", "default_duration_s", "overlap", "in_flight",
                                      "distinct_in_flight", "cum_energy_ratio", "cum_time_ratio", "cum_regret_j",
                                      "sequential_regret_j", "best_known_answers", "makespan_s"},
                                     csv_rows)));
  ZEUS_TRY(overlap_chart(report, r, "concurrent_distinct", "Distinct batch sizes among runs in flight",
                         "distinct batch sizes", [](const ConcurrentCell& c) { return c.distinct_in_flight.mean; }));
  ZEUS_TRY(overlap_chart(report, r, "concurrent_energy", "Zeus's energy / Default's with overlapping submissions",
                         "energy / Default", [](const ConcurrentCell& c) { return c.cum_energy_ratio.mean; }));
  ZEUS_TRY(overlap_chart(report, r, "concurrent_regret", "Zeus's cumulative regret with overlapping submissions",
                         "regret (MJ)", [](const ConcurrentCell& c) { return c.cum_regret_j.mean / 1e6; }));
  return report.finish("Zeus simulation: concurrent submissions (" + r.gpu + ")");
}

}  // namespace zeus::sim
