#include "monitor/window_log.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <utility>

namespace zeus {

std::string format_python_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  const double magnitude = std::abs(value);
  // Python's repr switches to exponent notation below 1e-4 and from 1e16 on.
  const bool scientific = magnitude != 0.0 && (magnitude < 1e-4 || magnitude >= 1e16);
  const auto format = scientific ? std::chars_format::scientific : std::chars_format::fixed;
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value, format);
  ZEUS_CHECK(error == std::errc(), "to_chars failed on a double");
  std::string text(buffer, end);
  if (!scientific && text.find('.') == std::string::npos) text += ".0";
  return text;
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

Result<std::unique_ptr<WindowLog>> WindowLog::create(const std::string& path,
                                                     std::vector<int> gpu_indices,
                                                     std::vector<int> cpu_indices,
                                                     std::vector<int> dram_indices, bool append) {
  std::string header = "start_time,window_name,elapsed_time";
  for (int i : gpu_indices) header += ",gpu" + std::to_string(i) + "_energy";
  for (int i : cpu_indices) header += ",cpu" + std::to_string(i) + "_energy";
  for (int i : dram_indices) header += ",dram" + std::to_string(i) + "_energy";
  bool write_header = true;
  if (append) {
    // An existing log must be ours, with the same columns: never append to another file.
    std::FILE* existing = std::fopen(path.c_str(), "r");
    if (existing != nullptr) {
      std::string first;
      int c = 0;
      while ((c = std::fgetc(existing)) != EOF && c != '\n' && first.size() <= header.size()) {
        first += static_cast<char>(c);
      }
      const bool empty = first.empty() && c == EOF;
      std::fclose(existing);
      if (!first.empty() && first.back() == '\r') first.pop_back();
      if (!empty && first != header) {
        return fail(ErrorCode::kInvalidArgument,
                    "'" + path + "' exists and is not an energy log with these columns (its first line is '" +
                        first.substr(0, 80) + "', expected '" + header +
                        "'); it was left untouched: choose another --log file");
      }
      write_header = empty;
    }
  }
  std::FILE* file = std::fopen(path.c_str(), append ? "a" : "w");
  if (file == nullptr) {
    return fail(ErrorCode::kUnavailable, "cannot create the energy log '" + path +
                                             "': " + std::strerror(errno) +
                                             "; check that its folder exists and is writable");
  }
  std::unique_ptr<WindowLog> log(new WindowLog(path, file, std::move(gpu_indices),
                                               std::move(cpu_indices), std::move(dram_indices)));
  if (!write_header) return log;
  header += '\n';
  if (std::fputs(header.c_str(), file) < 0 || std::fflush(file) != 0) {
    return fail(ErrorCode::kUnavailable, "cannot write the energy log '" + path +
                                             "': " + std::strerror(errno));
  }
  return log;
}

WindowLog::WindowLog(std::string path, std::FILE* file, std::vector<int> gpu_indices,
                     std::vector<int> cpu_indices, std::vector<int> dram_indices)
    : path_(std::move(path)),
      file_(file),
      gpu_indices_(std::move(gpu_indices)),
      cpu_indices_(std::move(cpu_indices)),
      dram_indices_(std::move(dram_indices)) {}

WindowLog::~WindowLog() { std::fclose(file_); }

Result<void> WindowLog::append(double start_time_s, std::string_view window_name,
                               const Measurement& measurement) {
  std::string row = format_python_float(start_time_s);
  row += ',';
  row += csv_field(window_name);
  row += ',';
  row += format_python_float(measurement.time_s);
  auto add_columns = [&row](const std::vector<int>& indices, const std::map<int, double>& values) {
    for (int i : indices) {
      row += ',';
      auto it = values.find(i);
      if (it != values.end()) row += format_python_float(it->second);
    }
  };
  add_columns(gpu_indices_, measurement.gpu_energy_j);
  add_columns(cpu_indices_, measurement.cpu_energy_j);
  add_columns(dram_indices_, measurement.dram_energy_j);
  row += '\n';
  if (std::fputs(row.c_str(), file_) < 0 || std::fflush(file_) != 0) {
    return fail(ErrorCode::kUnavailable,
                "cannot write the energy log '" + path_ + "': " + std::strerror(errno));
  }
  return ok();
}

}  // namespace zeus
