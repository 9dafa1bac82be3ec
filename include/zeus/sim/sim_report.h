// Simulation reports: a folder with index.md and index.html (every table and figure), the data
// behind each figure as CSV, a gnuplot script per figure and, when gnuplot is available, the
// rendered SVG. Without gnuplot the data and tables are still written and the report says how to
// render (`cd DIR && gnuplot *.gp`).
//
// The report is built in a temporary folder beside DIR and renamed into place at the end, so a
// failure leaves no partial report. An existing DIR is replaced only when it holds a previous
// report (an index.md) or nothing; otherwise the call fails and leaves it untouched.
// Thread-safety: one writer per DIR. Failure: kInvalidArgument (DIR is not a report),
// kPermissionDenied/kInternal for file-system errors, with the path in the message.
//
//   auto headline = zeus::sim::run_headline(options);
//   auto dir = zeus::sim::write_headline_report(*headline, "/tmp/zeus-report", {});
//   // dir: "/tmp/zeus-report" holding index.md, index.html, *.csv, *.gp, *.svg
#pragma once

#include <filesystem>
#include <string>

#include "zeus/common/result.h"
#include "zeus/sim/sim_concurrent.h"
#include "zeus/sim/sim_drift.h"
#include "zeus/sim/sim_experiments.h"
#include "zeus/sim/sim_search_path.h"
#include "zeus/sim/sim_sweeps.h"

namespace zeus::sim {

struct ReportOptions {
  // The gnuplot program: empty = "gnuplot" found on PATH; "none" = do not render.
  std::string gnuplot;
};

// Writes the headline report (Fig. 6 bars, Fig. 7 regret curves, tables) into `dir`.
Result<std::filesystem::path> write_headline_report(const HeadlineResult& result, const std::filesystem::path& dir,
                                                    const ReportOptions& options);
// Writes the pareto report (Fig. 2 TTA-ETA scatter, Fig. 5 ETA against b and p) into `dir`.
Result<std::filesystem::path> write_pareto_report(const ParetoResult& result, const std::filesystem::path& dir,
                                                  const ReportOptions& options);

// Writes a sweep report (eta-sweep: Fig. 11 trade-off per workload; every sweep: Zeus's energy,
// time and regret against the swept parameter) into `dir`.
Result<std::filesystem::path> write_sweep_report(const SweepResult& result, const std::filesystem::path& dir,
                                                 const ReportOptions& options);
// Writes the search paths over regret heat maps (Fig. 8) into `dir`.
Result<std::filesystem::path> write_search_path_report(const SearchPathResult& result,
                                                       const std::filesystem::path& dir,
                                                       const ReportOptions& options);
// Writes the drift report (regret curves, batch size per recurrence) into `dir`.
Result<std::filesystem::path> write_drift_report(const DriftResult& result, const std::filesystem::path& dir,
                                                 const ReportOptions& options);
// Writes the concurrent-submissions report into `dir`.
Result<std::filesystem::path> write_concurrent_report(const ConcurrentResult& result,
                                                      const std::filesystem::path& dir,
                                                      const ReportOptions& options);

}  // namespace zeus::sim
