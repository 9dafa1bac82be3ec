#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <sstream>

#include "common/csv_table.h"
#include "zeus/monitor/intensity_provider.h"

namespace zeus {

Result<double> parse_iso8601_utc(const std::string& text) {
  auto bad = [&] {
    return fail(ErrorCode::kInvalidArgument,
                "'" + text + "' is not an ISO 8601 time with a UTC offset "
                "(like 2022-10-20T06:20:00+00:00 or 2022-10-20T06:20:00Z)");
  };
  std::tm parts{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &parts);
  if (rest == nullptr) return bad();
  double fraction = 0;
  if (*rest == '.') {
    char* end = nullptr;
    fraction = std::strtod(rest, &end);
    rest = end;
  }
  long offset_s = 0;
  if (*rest == 'Z') {
    ++rest;
  } else {
    std::tm zone{};
    const char* after = strptime(rest, "%z", &zone);
    if (after == nullptr) return bad();
    offset_s = zone.tm_gmtoff;
    rest = after;
  }
  if (*rest != '\0') return bad();
  parts.tm_isdst = 0;
  const time_t utc = timegm(&parts);
  return static_cast<double>(utc - offset_s) + fraction;
}

Result<std::unique_ptr<IntensitySeries>> IntensitySeries::create(
    std::vector<IntensityInterval> intervals, std::string unit, std::string source) {
  std::sort(intervals.begin(), intervals.end(),
            [](const auto& a, const auto& b) { return a.start_s < b.start_s; });
  for (size_t i = 0; i < intervals.size(); ++i) {
    const IntensityInterval& v = intervals[i];
    if (!std::isfinite(v.start_s) || !std::isfinite(v.end_s) || v.end_s <= v.start_s) {
      return fail(ErrorCode::kInvalidArgument,
                  source + ": an interval must end after it starts (interval " +
                      std::to_string(i) + ")");
    }
    if (!std::isfinite(v.value) || v.value < 0) {
      return fail(ErrorCode::kInvalidArgument,
                  source + ": a value per kWh must be finite and not negative, not " +
                      std::to_string(v.value));
    }
    if (i > 0 && v.start_s < intervals[i - 1].end_s) {
      return fail(ErrorCode::kInvalidArgument,
                  source + ": intervals overlap at Unix time " + std::to_string(v.start_s));
    }
  }
  auto series = std::make_unique<IntensitySeries>();
  series->intervals_ = std::move(intervals);
  series->unit_ = std::move(unit);
  series->source_ = std::move(source);
  return series;
}

double IntensitySeries::next_boundary_after(double unix_s) const {
  constexpr double kDefaultPeriodS = 3600;
  if (intervals_.empty()) return (std::floor(unix_s / kDefaultPeriodS) + 1) * kDefaultPeriodS;
  for (const IntensityInterval& v : intervals_) {
    if (v.start_s > unix_s) return v.start_s;
    if (v.end_s > unix_s) return v.end_s;
  }
  const IntensityInterval& last = intervals_.back();
  const double period = last.end_s - last.start_s;
  return last.end_s + (std::floor((unix_s - last.end_s) / period) + 1) * period;
}

Result<double> IntensitySeries::value_at(double unix_s) {
  auto after = std::upper_bound(intervals_.begin(), intervals_.end(), unix_s,
                                [](double t, const IntensityInterval& v) { return t < v.start_s; });
  if (after != intervals_.begin()) {
    const IntensityInterval& v = *std::prev(after);
    if (unix_s < v.end_s) return v.value;
  }
  return fail(ErrorCode::kNotFound, source_ + " has no value for " + format_iso8601_utc(unix_s) +
                                        " (Unix time " +
                                        std::to_string(static_cast<long long>(unix_s)) + ")");
}

Result<std::unique_ptr<IntensitySeries>> load_intensity_csv(const std::string& path,
                                                            const std::string& location,
                                                            const std::string& unit) {
  std::ifstream in(path);
  if (!in) return fail(ErrorCode::kNotFound, "cannot read the intensity CSV " + path);
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = CsvTable::parse(text.str(), path);
  if (!parsed) return tl::unexpected(parsed.error());
  const CsvTable& table = *parsed;
  auto found = table.require_columns({"timestamp", "duration", "value"});
  if (!found) return tl::unexpected(found.error());
  const std::vector<int>& columns = *found;
  auto has_location = table.require_columns({"location"});
  std::vector<IntensityInterval> intervals;
  std::string first_location;
  for (size_t row = 0; row < table.num_rows(); ++row) {
    if (has_location) {
      const std::string here(table.cell(row, (*has_location)[0]));
      if (location.empty()) {
        if (first_location.empty()) first_location = here;
        if (here != first_location) {
          return fail(ErrorCode::kInvalidArgument,
                      path + " has several locations (" + first_location + ", " + here +
                          ", ...): name one");
        }
      } else if (here != location) {
        continue;
      }
    }
    auto start = parse_iso8601_utc(std::string(table.cell(row, columns[0])));
    if (!start) {
      return fail(ErrorCode::kInvalidArgument,
                  path + " line " + std::to_string(table.line_of(row)) + ": " +
                      start.error().message);
    }
    auto minutes = table.number(row, columns[1], "duration");
    if (!minutes) return tl::unexpected(minutes.error());
    auto value = table.number(row, columns[2], "value");
    if (!value) return tl::unexpected(value.error());
    if (*minutes <= 0) {
      return fail(ErrorCode::kInvalidArgument, path + " line " +
                                                   std::to_string(table.line_of(row)) +
                                                   ": duration must be positive minutes");
    }
    intervals.push_back({*start, *start + *minutes * 60, *value});
  }
  if (intervals.empty()) {
    return fail(ErrorCode::kNotFound, path + " has no rows" +
                                          (location.empty() ? "" : " for location " + location));
  }
  const std::string where = location.empty() ? first_location : location;
  return IntensitySeries::create(std::move(intervals), unit,
                                 "csv " + path + (where.empty() ? "" : " (" + where + ")"));
}

}  // namespace zeus
