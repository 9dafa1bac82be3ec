#include "sim/report_writer.h"

#include "sim/gnuplot_scripts.h"

#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <string_view>
#include <system_error>
#include <utility>

namespace zeus::sim {
namespace fs = std::filesystem;
namespace {

// The HTML report's markup, one helper per element shape: each takes plain text, escapes it and
// returns the element followed by a line break where it is a block. The page around them, the
// document's head and stylesheet, is web/report/ (report_frame_html(), filled by report_page).

std::string html_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// `name` around `inner`, which is HTML already: element("p", "x") is <p>x</p>.
std::string element(std::string_view name, std::string_view inner) {
  std::string out;
  out.append("<").append(name).append(">").append(inner).append("</").append(name).append(">");
  return out;
}

// An element without content or end tag, e.g. an image: `name` with each attribute's value escaped.
using Attributes = std::initializer_list<std::pair<std::string_view, std::string_view>>;
std::string empty_element(std::string_view name, Attributes attributes) {
  std::string out = "<" + std::string(name);
  for (const auto& [attribute, value] : attributes) {
    out.append(" ").append(attribute).append("=\"").append(html_escape(value)).append("\"");
  }
  return out + ">";
}

std::string heading_html(std::string_view text, int level) {
  return element("h" + std::to_string(level), html_escape(text)) + "\n";
}

std::string paragraph_html(std::string_view text) { return element("p", html_escape(text)) + "\n"; }

// A paragraph in italics: the report's note on figures that were not rendered.
std::string note_html(std::string_view text) {
  return element("p", element("em", html_escape(text))) + "\n";
}

// The header row's cells are th, the others td; one row a line.
std::string table_html(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows) {
  auto row_html = [](const std::vector<std::string>& cells, std::string_view cell) {
    std::string inner;
    for (const std::string& text : cells) inner += element(cell, html_escape(text));
    return element("tr", inner) + "\n";
  };
  std::string inner = "\n" + row_html(header, "th");
  for (const auto& row : rows) inner += row_html(row, "td");
  return element("table", inner) + "\n";
}

// `<stem>.svg` with `caption` as its alternative text and, with the script's name, its caption.
std::string figure_html(const std::string& stem, const std::string& caption) {
  const std::string image = empty_element("img", {{"src", stem + ".svg"}, {"alt", caption}});
  const std::string text = html_escape(caption + " (script: " + stem + ".gp)");
  return element("figure", image + element("figcaption", text)) + "\n";
}

// The whole page: report_frame_html() with `title` and `body`, both HTML already, in place of its
// @TITLE@ and @BODY@. One pass that never reads what it inserts, so the text may hold anything.
std::string report_page(std::string_view title, std::string_view body) {
  constexpr std::string_view kTitle = "@TITLE@", kBody = "@BODY@";
  const std::string_view frame = report_frame_html();
  const std::size_t title_at = frame.find(kTitle);
  const std::size_t body_at = frame.find(kBody, title_at + kTitle.size());
  std::string page;
  page.reserve(frame.size() + title.size() + body.size());
  page.append(frame.substr(0, title_at))
      .append(title)
      .append(frame.substr(title_at + kTitle.size(), body_at - title_at - kTitle.size()))
      .append(body)
      .append(frame.substr(body_at + kBody.size()));
  return page;
}

Result<void> write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return fail(ErrorCode::kPermissionDenied, "cannot write " + path.string() + " (check the folder's permissions)");
  return ok();
}

// The gnuplot executable to run, or "" when there is none.
std::string find_gnuplot(const std::string& wanted) {
  if (wanted == "none") return "";
  const std::string name = wanted.empty() ? "gnuplot" : wanted;
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path_env = std::getenv("PATH");
  std::string path = path_env ? path_env : "";
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (!dir.empty()) {
      std::string candidate = dir + "/" + name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    start = end + 1;
  }
  return "";
}

// Runs `gnuplot script` in `dir`; true on exit status 0.
bool run_gnuplot(const std::string& gnuplot, const fs::path& dir, const std::string& script) {
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(127);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      dup2(devnull, STDOUT_FILENO);
      dup2(devnull, STDERR_FILENO);
    }
    execl(gnuplot.c_str(), gnuplot.c_str(), script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string csv_text(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  auto add_row = [&out](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
    out += "\n";
  };
  add_row(header);
  for (const auto& row : rows) add_row(row);
  return out;
}

Result<ReportWriter> ReportWriter::create(const fs::path& dir, const std::string& gnuplot) {
  ReportWriter writer;
  writer.dir_ = dir.has_filename() ? dir : dir.parent_path();
  fs::path parent = writer.dir_.parent_path();
  if (parent.empty()) parent = ".";
  std::error_code ec;
  fs::create_directories(parent, ec);
  writer.temp_dir_ = parent / ("." + writer.dir_.filename().string() + ".tmp-" + std::to_string(getpid()));
  fs::remove_all(writer.temp_dir_, ec);
  if (!fs::create_directory(writer.temp_dir_, ec)) {
    writer.finished_ = true;
    return fail(ErrorCode::kPermissionDenied,
                "cannot create " + writer.temp_dir_.string() + ": " + ec.message() + " (choose a writable --report DIR)");
  }
  writer.gnuplot_ = find_gnuplot(gnuplot);
  return writer;
}

ReportWriter::ReportWriter(ReportWriter&& other) noexcept
    : dir_(std::move(other.dir_)),
      temp_dir_(std::move(other.temp_dir_)),
      gnuplot_(std::move(other.gnuplot_)),
      markdown_(std::move(other.markdown_)),
      html_(std::move(other.html_)),
      figures_(std::move(other.figures_)),
      finished_(other.finished_) {
  other.finished_ = true;
}

ReportWriter::~ReportWriter() {
  if (!finished_ && !temp_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(temp_dir_, ec);
  }
}

void ReportWriter::heading(const std::string& text, int level) {
  markdown_ += std::string(static_cast<std::size_t>(level), '#') + " " + text + "\n\n";
  html_ += heading_html(text, level);
}

void ReportWriter::paragraph(const std::string& text) {
  markdown_ += text + "\n\n";
  html_ += paragraph_html(text);
}

void ReportWriter::table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  auto md_row = [](const std::vector<std::string>& cells) {
    std::string line = "|";
    for (const std::string& c : cells) line += " " + c + " |";
    return line + "\n";
  };
  markdown_ += md_row(header);
  markdown_ += "|";
  for (std::size_t i = 0; i < header.size(); ++i) markdown_ += "---|";
  markdown_ += "\n";
  for (const auto& row : rows) markdown_ += md_row(row);
  markdown_ += "\n";
  html_ += table_html(header, rows);
}

Result<void> ReportWriter::data_file(const std::string& name, const std::string& text) {
  return write_file(temp_dir_ / name, text);
}

Result<void> ReportWriter::figure(const std::string& stem, const std::string& gnuplot_script, const std::string& caption) {
  ZEUS_TRY(write_file(temp_dir_ / (stem + ".gp"), gnuplot_script));
  figures_.push_back(stem);
  markdown_ += "![" + caption + "](" + stem + ".svg)\n\n*" + caption + "* (script: `" + stem + ".gp`)\n\n";
  html_ += figure_html(stem, caption);
  return ok();
}

Result<void> ReportWriter::bar_chart(const std::string& stem, const std::vector<std::string>& header,
                                     const std::vector<std::vector<std::string>>& rows, const std::string& title,
                                     const std::string& ylabel,
                                     const std::vector<std::vector<std::string>>* errors) {
  const int series = static_cast<int>(header.size()) - 1;
  if (errors == nullptr) {
    ZEUS_TRY(data_file(stem + ".csv", csv_text(header, rows)));
    return figure(stem, clustered_bars_script(stem, stem + ".csv", series, title, ylabel),
                  title + " (data: " + stem + ".csv)");
  }
  // Each series' value, then its standard deviation.
  std::vector<std::string> with_sd = {header.front()};
  for (size_t c = 1; c < header.size(); ++c) {
    with_sd.push_back(header[c]);
    with_sd.push_back(header[c] + " sd");
  }
  std::vector<std::vector<std::string>> interleaved;
  for (size_t r = 0; r < rows.size(); ++r) {
    std::vector<std::string> row = {rows[r].front()};
    for (size_t c = 1; c < rows[r].size(); ++c) {
      row.push_back(rows[r][c]);
      row.push_back(r < errors->size() && c - 1 < (*errors)[r].size() ? (*errors)[r][c - 1] : "0");
    }
    interleaved.push_back(std::move(row));
  }
  ZEUS_TRY(data_file(stem + ".csv", csv_text(with_sd, interleaved)));
  return figure(stem, clustered_bars_script(stem, stem + ".csv", series, title, ylabel, true),
                title + ", mean ± standard deviation over seeds (data: " + stem + ".csv)");
}

Result<void> ReportWriter::line_chart(const std::string& stem, const std::vector<std::string>& header,
                                      const std::vector<std::vector<std::string>>& rows, const std::string& title,
                                      const std::string& xlabel, const std::string& ylabel, bool logscale_x) {
  ZEUS_TRY(data_file(stem + ".csv", csv_text(header, rows)));
  return figure(stem,
                lines_script(stem, stem + ".csv", static_cast<int>(header.size()) - 1, title, xlabel, ylabel, logscale_x),
                title + " (data: " + stem + ".csv)");
}

Result<void> ReportWriter::band_chart(const std::string& stem, const std::vector<std::string>& header,
                                      const std::vector<std::vector<double>>& rows, const std::string& title,
                                      const std::string& xlabel, const std::string& ylabel) {
  std::vector<std::string> columns = {header.front()};
  for (std::size_t c = 1; c < header.size(); ++c) {
    columns.insert(columns.end(), {header[c], header[c] + " low", header[c] + " high"});
  }
  std::vector<std::vector<std::string>> cells;
  for (const std::vector<double>& row : rows) {
    std::vector<std::string> line = {fixed(row.front(), 0)};
    for (std::size_t s = 0; 2 * s + 2 < row.size(); ++s) {
      const double value = row[1 + 2 * s], sd = row[2 + 2 * s];
      line.insert(line.end(), {fixed(value, 6), fixed(value - sd, 6), fixed(value + sd, 6)});
    }
    cells.push_back(std::move(line));
  }
  ZEUS_TRY(data_file(stem + ".csv", csv_text(columns, cells)));
  return figure(stem,
                lines_with_bands_script(stem, stem + ".csv", static_cast<int>(header.size()) - 1, title,
                                        xlabel, ylabel),
                title + "; the bands span ± one standard deviation over seeds (data: " + stem + ".csv)");
}

Result<fs::path> ReportWriter::finish(const std::string& title) {
  std::string note;
  if (gnuplot_.empty()) {
    note = "The figures were not rendered: gnuplot was not found (or was disabled). Render them in this "
           "folder with `for f in *.gp; do gnuplot \"$f\"; done` (Debian package gnuplot-nox).";
  } else {
    std::string failed;
    for (const std::string& stem : figures_) {
      if (!run_gnuplot(gnuplot_, temp_dir_, stem + ".gp")) failed += " " + stem + ".gp";
    }
    if (!failed.empty()) note = "gnuplot failed on:" + failed + "; run it by hand in this folder to see why.";
  }
  std::string md = "# " + title + "\n\n" + (note.empty() ? "" : "> " + note + "\n\n") + markdown_;
  const std::string body = heading_html(title, 1) + (note.empty() ? "" : note_html(note)) + html_;
  const std::string html = report_page(html_escape(title), body);
  ZEUS_TRY(write_file(temp_dir_ / "index.md", md));
  ZEUS_TRY(write_file(temp_dir_ / "index.html", html));

  std::error_code ec;
  fs::path old;
  if (fs::exists(dir_, ec)) {
    const bool is_report = fs::is_directory(dir_, ec) && (fs::is_empty(dir_, ec) || fs::exists(dir_ / "index.md", ec));
    if (!is_report) {
      return fail(ErrorCode::kInvalidArgument, dir_.string() + " exists and is not a zeus report (choose another --report DIR)");
    }
    old = temp_dir_.string() + ".old";
    fs::remove_all(old, ec);
    fs::rename(dir_, old, ec);
    if (ec) return fail(ErrorCode::kPermissionDenied, "cannot replace " + dir_.string() + ": " + ec.message());
  }
  fs::rename(temp_dir_, dir_, ec);
  if (ec && !old.empty()) {
    std::error_code restore_ec;
    fs::rename(old, dir_, restore_ec);  // put the previous report back
  }
  if (ec) return fail(ErrorCode::kPermissionDenied, "cannot create " + dir_.string() + ": " + ec.message());
  finished_ = true;
  if (!old.empty()) fs::remove_all(old, ec);
  return dir_;
}

}  // namespace zeus::sim
