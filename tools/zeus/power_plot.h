// The live graph of `zeus power --plot`: per device a header line (its latest readings and
// temperature) and a few rows of a bar graph of its recent power, drawn with the eighth-block
// characters (U+2581..U+2588), newest reading on the right. Pure: it builds text, the command
// decides where it goes (redraw_in_place() adds the ANSI escapes that rewrite the previous frame
// on a terminal).
// Units: watts. Thread-safety: reentrant.
//
//   PowerPlotSeries gpu{.label = "GPU 0", .detail = "312.4 W  45 C", .watts = history,
//                       .scale_max_w = 700};
//   std::cout << redraw_in_place(render_power_plot({gpu}, 60, 3), previous_lines);
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <vector>

namespace zeus::cli {

struct PowerPlotSeries {
  std::string label;         // "GPU 0", "CPU 0 package"
  std::string detail;        // what the header shows after the label: readings, temperature
  std::deque<double> watts;  // oldest first; NaN for a reading that failed (drawn blank)
  double scale_max_w = 0;    // the top of the graph; 0: the largest reading shown
};

// `height` rows (at least 1) of `width` columns (at least 1) graphing the last `width` values of
// `watts` on [0, scale_max_w]; fewer values are right-aligned (blank on the left). Values above
// the scale are drawn full, negative or NaN ones blank.
std::vector<std::string> render_bar_graph(const std::deque<double>& watts, double scale_max_w,
                                          size_t width, size_t height);

// Per series: "<label>  <detail>  (graph 0-<scale> W)" (cut to width + 2 columns, as wide as
// the graph rows) then its bar graph rows, indented by two spaces.
std::vector<std::string> render_power_plot(const std::vector<PowerPlotSeries>& series, size_t width,
                                           size_t height);

// Bar rows per graph so that `graphs` graphs (a header line and their rows each) and two lines
// of the command's own fit in `terminal_lines`: 1 to 8 (1 when even that does not fit).
size_t plot_rows_to_fit(size_t terminal_lines, size_t graphs);

// The text that replaces the previous frame of `previous_lines` lines (0 for the first frame) by
// `lines` on an ANSI terminal: cursor up, then each line cleared and rewritten.
std::string redraw_in_place(const std::vector<std::string>& lines, size_t previous_lines);

}  // namespace zeus::cli
