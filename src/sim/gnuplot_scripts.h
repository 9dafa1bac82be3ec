// Gnuplot scripts for the simulation reports. Each script reads CSV files (header row first)
// from its own folder and writes `<stem>.svg` there.
#pragma once

#include <string>
#include <vector>

namespace zeus::sim {

// `text` as a single-quoted gnuplot string.
std::string gnuplot_quote(const std::string& text);
// The common head of every script: SVG terminal writing `<stem>.svg`, CSV input, title, grid.
std::string gnuplot_preamble(const std::string& stem, const std::string& title);

// Clustered bars: first CSV column = category (x tic), the other columns = one bar series each.
// With `with_errors`, each series is two columns, its value and its standard deviation (drawn as
// an error bar).
std::string clustered_bars_script(const std::string& stem, const std::string& csv, int num_series,
                                  const std::string& title, const std::string& ylabel,
                                  bool with_errors = false);
// Lines: first column = x, the next num_series columns = one line each.
std::string lines_script(const std::string& stem, const std::string& csv, int num_series,
                         const std::string& title, const std::string& xlabel,
                         const std::string& ylabel, bool logscale_x = false);
// Lines with bands: first column = x, then three columns per series (its value, the band's
// low and high edges); each band is drawn translucent in its series' colour under the lines.
std::string lines_with_bands_script(const std::string& stem, const std::string& csv,
                                    int num_series, const std::string& title,
                                    const std::string& xlabel, const std::string& ylabel);
// TTA-ETA scatter of pareto points (columns: batch_size, power_limit_w, tta_s, eta_j, cost_j,
// reach_probability, on_frontier, is_default, is_optimum), the frontier as a line from
// `frontier_csv` (same columns, sorted by TTA), b0 at max power and the optimum marked.
std::string pareto_script(const std::string& stem, const std::string& csv,
                          const std::string& frontier_csv, const std::string& title);

// Zeus's (TTA, ETA) per eta against the Oracle's: columns eta, zeus_tta_s, zeus_eta_j,
// oracle_tta_s, oracle_eta_j; Zeus's points are labelled with their eta.
std::string tradeoff_script(const std::string& stem, const std::string& csv,
                            const std::string& title);
// A heat map of `heat_csv` (columns b_index, p_index, value; b-major) with the search paths of
// `path_csvs` (columns run, b_index, p_index, ...) drawn over it, each shifted sideways a little
// so overlapping paths stay visible. Tic labels name the batch sizes and power limits.
std::string heatmap_paths_script(const std::string& stem, const std::string& heat_csv,
                                 const std::vector<std::string>& path_csvs,
                                 const std::vector<std::string>& path_titles,
                                 const std::vector<std::string>& x_labels,
                                 const std::vector<std::string>& y_labels, const std::string& title,
                                 const std::string& cblabel);

}  // namespace zeus::sim
