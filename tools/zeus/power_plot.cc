#include "power_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace zeus::cli {
namespace {

// A blank, then U+2581 (one eighth) .. U+2588 (full block), in UTF-8.
constexpr const char* kEighths[] = {" ",
                                    "\xe2\x96\x81",
                                    "\xe2\x96\x82",
                                    "\xe2\x96\x83",
                                    "\xe2\x96\x84",
                                    "\xe2\x96\x85",
                                    "\xe2\x96\x86",
                                    "\xe2\x96\x87",
                                    "\xe2\x96\x88"};

double largest(const std::deque<double>& watts) {
  double top = 0;
  for (double w : watts) {
    if (std::isfinite(w)) top = std::max(top, w);
  }
  return top;
}

std::string watts_text(double watts) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.0f", watts);
  return text;
}

}  // namespace

std::vector<std::string> render_bar_graph(const std::deque<double>& watts, double scale_max_w,
                                          size_t width, size_t height) {
  width = std::max<size_t>(width, 1);
  height = std::max<size_t>(height, 1);
  const size_t shown = std::min(width, watts.size());
  const size_t blank = width - shown;
  std::vector<int> eighths(width, 0);  // per column: filled eighths of the whole height
  for (size_t i = 0; i < shown; ++i) {
    const double w = watts[watts.size() - shown + i];
    if (!std::isfinite(w) || w <= 0 || scale_max_w <= 0) continue;
    const double filled = std::min(w / scale_max_w, 1.0) * static_cast<double>(height * 8);
    // At least one eighth for any positive reading, so a small draw is visible.
    eighths[blank + i] = std::max(1, static_cast<int>(std::lround(filled)));
  }
  std::vector<std::string> rows(height);
  for (size_t row = 0; row < height; ++row) {
    const int base = static_cast<int>((height - 1 - row) * 8);  // eighths below this row
    for (int level : eighths) rows[row] += kEighths[std::clamp(level - base, 0, 8)];
  }
  return rows;
}

std::vector<std::string> render_power_plot(const std::vector<PowerPlotSeries>& series, size_t width,
                                           size_t height) {
  std::vector<std::string> lines;
  for (const PowerPlotSeries& s : series) {
    const double scale = s.scale_max_w > 0 ? s.scale_max_w : largest(s.watts);
    std::string header = s.label + "  " + s.detail + "  (graph 0-" + watts_text(scale) + " W)";
    // No line wider than the graph's: a wrapped line would throw off the redraw's line count.
    if (header.size() > width + 2) header.resize(width + 2);
    lines.push_back(header);
    for (std::string& row : render_bar_graph(s.watts, scale, width, height)) {
      lines.push_back("  " + row);
    }
  }
  return lines;
}

size_t plot_rows_to_fit(size_t terminal_lines, size_t graphs) {
  const size_t room = terminal_lines > 3 ? terminal_lines - 3 : 1;
  const size_t per_graph = graphs == 0 ? room : room / graphs;
  return std::clamp<size_t>(per_graph > 1 ? per_graph - 1 : 1, 1, 8);
}

std::string redraw_in_place(const std::vector<std::string>& lines, size_t previous_lines) {
  std::string out;
  if (previous_lines > 0) out += "\x1b[" + std::to_string(previous_lines) + "A";
  for (const std::string& line : lines) out += "\r\x1b[2K" + line + "\n";
  // A frame shorter than the previous one: clear what is left below it.
  if (previous_lines > lines.size()) out += "\x1b[J";
  return out;
}

}  // namespace zeus::cli
