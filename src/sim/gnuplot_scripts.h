// Gnuplot scripts for the simulation reports. Each script reads CSV files (header row first)
// from its own folder and writes `<stem>.svg` there.
#pragma once

#include <string>
#include <vector>

namespace zeus::sim {

// Clustered bars: first CSV column = category (x tic), the other columns = one bar series each.
std::string clustered_bars_script(const std::string& stem, const std::string& csv, int num_series,
                                  const std::string& title, const std::string& ylabel);
// Lines: first column = x, the next num_series columns = one line each.
std::string lines_script(const std::string& stem, const std::string& csv, int num_series, const std::string& title,
                         const std::string& xlabel, const std::string& ylabel, bool logscale_x = false);
// TTA-ETA scatter of pareto points (columns: batch_size, power_limit_w, tta_s, eta_j, cost_j,
// reach_probability, on_frontier, is_default, is_optimum), the frontier as a line from
// `frontier_csv` (same columns, sorted by TTA), b0 at max power and the optimum marked.
std::string pareto_script(const std::string& stem, const std::string& csv, const std::string& frontier_csv,
                          const std::string& title);

}  // namespace zeus::sim
