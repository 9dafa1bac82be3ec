// power_profile_from_monitor_log(): rebuilds a power-limit profile from a monitor CSV log.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "zeus/optimizer/power_profile.h"

namespace zeus {
namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream stream(line);
  std::string field;
  while (std::getline(stream, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

bool parse_double(const std::string& text, double* out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(*out);
}

// The integer after the last '_' of a window name, if there is one.
bool setting_of_window(const std::string& name, uint32_t* out) {
  const auto underscore = name.rfind('_');
  if (underscore == std::string::npos || underscore + 1 == name.size()) return false;
  const char* first = name.data() + underscore + 1;
  const char* last = name.data() + name.size();
  auto [end, ec] = std::from_chars(first, last, *out);
  return ec == std::errc() && end == last;
}

bool is_gpu_energy_column(const std::string& name) {
  return name.size() > 10 && name.rfind("gpu", 0) == 0 &&
         name.compare(name.size() - 7, 7, "_energy") == 0;
}

}  // namespace

Result<PowerProfile> power_profile_from_monitor_log(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return fail(ErrorCode::kNotFound, "monitor log '" + path + "' does not exist");
  }
  std::ifstream in(path);
  if (!in) {
    return fail(ErrorCode::kPermissionDenied,
                "cannot read monitor log '" + path + "' (check its permissions)");
  }
  auto malformed = [&path](size_t line_number, const std::string& problem) {
    return fail(ErrorCode::kInvalidArgument,
                "monitor log '" + path + "' line " + std::to_string(line_number) + ": " +
                    problem +
                    " (expected the monitor's CSV: "
                    "start_time,window_name,elapsed_time,gpu0_energy,...)");
  };

  std::string line;
  if (!std::getline(in, line)) return malformed(1, "the file is empty");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const std::vector<std::string> header = split_csv_line(line);
  if (header.size() < 4 || header[0] != "start_time" || header[1] != "window_name" ||
      header[2] != "elapsed_time") {
    return malformed(1, "the header is not start_time,window_name,elapsed_time,...");
  }
  std::vector<size_t> gpu_columns;
  for (size_t i = 3; i < header.size(); ++i) {
    if (is_gpu_energy_column(header[i])) gpu_columns.push_back(i);
  }
  if (gpu_columns.empty()) return malformed(1, "the header has no gpu<i>_energy column");

  // Keyed by setting; the position keeps the profiling order of each setting's last row.
  std::map<uint32_t, std::pair<size_t, KnobMeasurement>> by_setting;
  size_t line_number = 1;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string> fields = split_csv_line(line);
    if (fields.size() != header.size()) {
      return malformed(line_number, std::to_string(fields.size()) + " fields where the header has " +
                                        std::to_string(header.size()));
    }
    uint32_t setting = 0;
    if (!setting_of_window(fields[1], &setting)) continue;  // a window of some other code region
    KnobMeasurement m;
    m.setting = setting;
    if (!parse_double(fields[2], &m.time_s) || m.time_s <= 0) {
      return malformed(line_number, "elapsed_time '" + fields[2] + "' is not a positive number");
    }
    for (size_t column : gpu_columns) {
      double energy_j = 0;
      if (!parse_double(fields[column], &energy_j) || energy_j < 0) {
        return malformed(line_number, header[column] + " '" + fields[column] +
                                          "' is not a non-negative number");
      }
      m.energy_j += energy_j;
    }
    // Finite fields can still add up, or divide, to infinity (1e308 J in 1e-308 s): no cost
    // could be computed from such a row.
    if (!std::isfinite(m.energy_j) || !std::isfinite(m.energy_j / m.time_s)) {
      char numbers[96];
      std::snprintf(numbers, sizeof(numbers), "%g J in %g s", m.energy_j, m.time_s);
      return malformed(line_number, std::string("energy and elapsed_time give no finite power (") +
                                        numbers + ")");
    }
    by_setting[setting] = {line_number, m};
  }
  if (by_setting.empty()) {
    return malformed(line_number,
                     "no row's window name ends in _<power limit in W> "
                     "(e.g. __PowerLimitOptimizer_300)");
  }
  std::vector<std::pair<size_t, KnobMeasurement>> ordered;
  for (const auto& [setting, row] : by_setting) ordered.push_back(row);
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  PowerProfile profile;
  profile.knob = OptimizerKnob::kPowerLimit;
  profile.gpu_count = static_cast<uint32_t>(gpu_columns.size());
  for (const auto& row : ordered) profile.measurements.push_back(row.second);
  return profile;
}

}  // namespace zeus
