#include "sim/report_writer.h"

#include "sim/gnuplot_scripts.h"

#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <system_error>

namespace zeus::sim {
namespace fs = std::filesystem;
namespace {

std::string html_escape(const std::string& text) {
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
  html_ += "<h" + std::to_string(level) + ">" + html_escape(text) + "</h" + std::to_string(level) + ">\n";
}

void ReportWriter::paragraph(const std::string& text) {
  markdown_ += text + "\n\n";
  html_ += "<p>" + html_escape(text) + "</p>\n";
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
  html_ += "<table>\n<tr>";
  for (const std::string& h : header) html_ += "<th>" + html_escape(h) + "</th>";
  html_ += "</tr>\n";
  for (const auto& row : rows) {
    html_ += "<tr>";
    for (const std::string& c : row) html_ += "<td>" + html_escape(c) + "</td>";
    html_ += "</tr>\n";
  }
  html_ += "</table>\n";
}

Result<void> ReportWriter::data_file(const std::string& name, const std::string& text) {
  return write_file(temp_dir_ / name, text);
}

Result<void> ReportWriter::figure(const std::string& stem, const std::string& gnuplot_script, const std::string& caption) {
  ZEUS_TRY(write_file(temp_dir_ / (stem + ".gp"), gnuplot_script));
  figures_.push_back(stem);
  markdown_ += "![" + caption + "](" + stem + ".svg)\n\n*" + caption + "* (script: `" + stem + ".gp`)\n\n";
  html_ += "<figure><img src=\"" + stem + ".svg\" alt=\"" + html_escape(caption) + "\"><figcaption>" +
           html_escape(caption) + " (script: " + stem + ".gp)</figcaption></figure>\n";
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
  std::string html = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + html_escape(title) +
                     "</title>\n<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
                     "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
                     "img{max-width:100%}</style></head><body>\n<h1>" + html_escape(title) + "</h1>\n" +
                     (note.empty() ? "" : "<p><em>" + html_escape(note) + "</em></p>\n") + html_ + "</body></html>\n";
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
