// ReportWriter: assembles a report folder (Markdown + HTML + CSV + gnuplot scripts + SVG) in a
// temporary folder and renames it into place in finish(); see zeus/sim/sim_report.h.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/common/result.h"

namespace zeus::sim {

class ReportWriter {
 public:
  // Creates the temporary folder beside `dir`. `gnuplot`: as ReportOptions::gnuplot.
  static Result<ReportWriter> create(const std::filesystem::path& dir, const std::string& gnuplot);
  ReportWriter(ReportWriter&& other) noexcept;
  ~ReportWriter();

  void heading(const std::string& text, int level = 2);
  void paragraph(const std::string& text);
  // A table in both formats; cells are plain text.
  void table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);
  // Writes `name` (e.g. "headline.csv") into the report.
  Result<void> data_file(const std::string& name, const std::string& text);
  // Writes `<stem>.gp` (which must write `<stem>.svg`) and shows the figure with its caption.
  Result<void> figure(const std::string& stem, const std::string& gnuplot_script, const std::string& caption);
  // Writes `<stem>.csv` from header and rows and a clustered bar chart of it: first column =
  // categories (x tics), each other column one bar series.
  // With `errors` (one row per row, one cell per series: its standard deviation), each series
  // gets its error bars and the CSV a "<series> sd" column after each series' own.
  Result<void> bar_chart(const std::string& stem, const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows, const std::string& title,
                         const std::string& ylabel,
                         const std::vector<std::vector<std::string>>* errors = nullptr);
  // Writes `<stem>.csv` and a line chart of it: first column = x, each other column one line.
  Result<void> line_chart(const std::string& stem, const std::vector<std::string>& header,
                          const std::vector<std::vector<std::string>>& rows, const std::string& title,
                          const std::string& xlabel, const std::string& ylabel, bool logscale_x = false);
  // Writes `<stem>.csv` and a line chart of it with a band around each line: `rows` hold x, then
  // each series' value and standard deviation; the band spans value ± one standard deviation
  // (the CSV has "<series> low" and "<series> high" after each series' value).
  Result<void> band_chart(const std::string& stem, const std::vector<std::string>& header,
                          const std::vector<std::vector<double>>& rows, const std::string& title,
                          const std::string& xlabel, const std::string& ylabel);
  // Renders the figures, writes index.md and index.html, renames the folder to `dir`.
  Result<std::filesystem::path> finish(const std::string& title);

 private:
  ReportWriter() = default;
  std::filesystem::path dir_, temp_dir_;
  std::string gnuplot_;
  std::string markdown_, html_;
  std::vector<std::string> figures_;
  bool finished_ = false;
};

// The HTML report's frame: web/report/frame.html with web/report/report.css in its style element,
// embedded at build time (cmake/EmbedWeb.cmake, zeus_embed_frame). Its @TITLE@ and @BODY@ appear
// once each, the title's first (checked at build time); ReportWriter::finish fills them.
std::string_view report_frame_html();

// Formats a double with `digits` decimals ("%.*f").
std::string fixed(double value, int digits);
// CSV text from a header and rows.
std::string csv_text(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

}  // namespace zeus::sim
