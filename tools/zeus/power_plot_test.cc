#include "power_plot.h"

#include <gtest/gtest.h>

#include <cmath>

namespace zeus::cli {
namespace {

const std::string kFull = "\xe2\x96\x88";
const std::string kHalf = "\xe2\x96\x84";
const std::string kEighth = "\xe2\x96\x81";

TEST(PowerPlotTest, BarsScaleToTheTopAndNewestIsOnTheRight) {
  // Two rows: 16 eighths in all. 700 W of 700 is full, 175 W a quarter (half of the bottom row).
  auto rows = render_bar_graph({700.0, 175.0}, 700.0, 4, 2);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], "  " + kFull + " ");
  EXPECT_EQ(rows[1], "  " + kFull + kHalf);
}

TEST(PowerPlotTest, OnlyTheLastWidthReadingsShowAndOddValuesDrawSafely) {
  auto rows = render_bar_graph({700.0, 700.0, 700.0, 0.0, 1.0}, 700.0, 3, 1);
  ASSERT_EQ(rows.size(), 1u);
  // A tiny positive reading still shows one eighth; 0 W is blank.
  EXPECT_EQ(rows[0], kFull + " " + kEighth);
  auto odd = render_bar_graph({std::nan(""), -5.0, 5000.0}, 700.0, 3, 1);
  EXPECT_EQ(odd[0], "  " + kFull);  // NaN and negative blank, above the scale full
  auto degenerate = render_bar_graph({10.0}, 0.0, 0, 0);  // clamped to 1 x 1, no scale: blank
  ASSERT_EQ(degenerate.size(), 1u);
  EXPECT_EQ(degenerate[0], " ");
}

TEST(PowerPlotTest, EachSeriesHasAHeaderAndItsRows) {
  PowerPlotSeries gpu{"GPU 0", "350.0 W  45 C", {350.0}, 700.0};
  PowerPlotSeries cpu{"CPU 0 package", "20.0 W", {10.0, 20.0}, 0.0};
  auto lines = render_power_plot({gpu, cpu}, 40, 3);
  ASSERT_EQ(lines.size(), 8u);  // (1 header + 3 rows) x 2
  EXPECT_EQ(lines[0], "GPU 0  350.0 W  45 C  (graph 0-700 W)");
  EXPECT_EQ(lines[4], "CPU 0 package  20.0 W  (graph 0-20 W)");  // scale: the largest shown
  EXPECT_EQ(lines[5], "  " + std::string(39, ' ') + kFull);
  // A narrow terminal: the header is cut to the graph's width, so no line wraps.
  auto narrow = render_power_plot({gpu}, 8, 1);
  EXPECT_EQ(narrow[0], "GPU 0  350");
}

TEST(PowerPlotTest, RedrawMovesUpAndClearsEachLine) {
  EXPECT_EQ(redraw_in_place({"a", "b"}, 0), "\r\x1b[2Ka\n\r\x1b[2Kb\n");
  EXPECT_EQ(redraw_in_place({"a"}, 2), "\x1b[2A\r\x1b[2Ka\n\x1b[J");
}

// The graphs' height follows the terminal's, so 4 GPUs in 16 lines
// keep every header on screen, and a tall terminal gets taller graphs.
TEST(PowerPlotTest, PowerPlot_RowsFitTheTerminal) {
  EXPECT_EQ(plot_rows_to_fit(16, 4), 2u);   // 4 x (1 + 2) = 12 <= 16 - 3
  EXPECT_LE(4 * (1 + plot_rows_to_fit(16, 4)) + 3, 16u);
  EXPECT_EQ(plot_rows_to_fit(50, 4), 8u);   // capped
  EXPECT_EQ(plot_rows_to_fit(24, 1), 8u);
  EXPECT_EQ(plot_rows_to_fit(10, 8), 1u);   // does not fit: the least
  EXPECT_EQ(plot_rows_to_fit(0, 0), 1u);
}

}  // namespace
}  // namespace zeus::cli
