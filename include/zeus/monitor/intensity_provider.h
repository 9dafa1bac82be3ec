// IntensityProvider: what one kWh costs, over time, in one unit — grams of CO2-equivalent
// (carbon intensity, gCO2eq/kWh) or money (an electricity price, $/kWh). The accounting monitor
// (accounting_monitor.h) splits its windows where the provider's value may change and charges
// each part at the value of its interval.
//
// Providers here: IntensitySeries (a fixed list of intervals: tests, replays, a Python list),
// ConstantIntensity (one value) and a CSV file (load_intensity_csv). Online providers (Electricity
// Maps, OpenEI) live in the HTTP layer (include/zeus/client/online_intensity.h).
// Thread-safety: IntensitySeries is immutable after construction; providers are called from one
// thread at a time by the monitor. Failure: value_at() answers NotFound for a time no interval
// covers (a gap), Unavailable when an online source cannot be reached.
//
//   auto series = zeus::load_intensity_csv("data/carbon_hist.csv", "MISO_MASON_CITY");
//   double g_per_kwh = *(*series)->value_at(1666246800.0);
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "zeus/common/result.h"

namespace zeus {

class IntensityProvider {
 public:
  virtual ~IntensityProvider() = default;
  // "gCO2eq/kWh", "$/kWh": what value_at() answers per kWh.
  virtual std::string unit() const = 0;
  // The first time after `unix_s` at which the value may change (an interval's end). Pure, no I/O.
  virtual double next_boundary_after(double unix_s) const = 0;
  // The value per kWh at `unix_s`.
  virtual Result<double> value_at(double unix_s) = 0;
  // "csv data/carbon_hist.csv (MISO_MASON_CITY)", for reports.
  virtual std::string describe() const = 0;
};

struct IntensityInterval {
  double start_s = 0;  // Unix seconds
  double end_s = 0;
  double value = 0;    // per kWh
};

// A fixed series. Intervals must not overlap; gaps are allowed (NotFound there). Outside the
// series, boundaries fall every `period_s` from its last end (or its first start, before it).
class IntensitySeries final : public IntensityProvider {
 public:
  // InvalidArgument for overlapping, empty or reversed intervals, or a negative or non-finite
  // value.
  static Result<std::unique_ptr<IntensitySeries>> create(std::vector<IntensityInterval> intervals,
                                                         std::string unit, std::string source);
  std::string unit() const override { return unit_; }
  double next_boundary_after(double unix_s) const override;
  Result<double> value_at(double unix_s) override;
  std::string describe() const override { return source_; }
  const std::vector<IntensityInterval>& intervals() const { return intervals_; }

 private:
  std::vector<IntensityInterval> intervals_;  // sorted by start
  std::string unit_;
  std::string source_;
};

// One value for all time ("const:420"): a what-if with no series. No boundaries.
class ConstantIntensity final : public IntensityProvider {
 public:
  // InvalidArgument for a negative or non-finite value.
  static Result<std::unique_ptr<ConstantIntensity>> create(double value, std::string unit);
  std::string unit() const override { return unit_; }
  double next_boundary_after(double unix_s) const override;  // +infinity
  Result<double> value_at(double unix_s) override;
  std::string describe() const override;

 private:
  double value_ = 0;
  std::string unit_;
};

// Reads a carbon-intensity CSV with a header naming at least `timestamp` (ISO 8601 with a UTC
// offset, e.g. 2022-10-20T06:20:00+00:00), `duration` (minutes) and `value` (gCO2eq/kWh); a
// `location` column, when present, selects the rows of `location` (required when the file has
// several). Rows with another location are skipped; a malformed row is an error naming its line.
Result<std::unique_ptr<IntensitySeries>> load_intensity_csv(const std::string& path,
                                                            const std::string& location = "",
                                                            const std::string& unit = "gCO2eq/kWh");

// The offline providers by name, "const:VALUE" (per kWh in `unit`) or "csv:FILE[:LOCATION]": what
// a reproducible replay (zeus simulate --carbon/--price) accepts. An online one
// ("electricitymaps:...", "openei:...") is refused with InvalidArgument saying why and naming the
// offline forms; any other text gets the accepted forms. (intensity_provider_from_spec in
// zeus/client/online_intensity.h adds the online ones and hands these two forms here.)
Result<std::unique_ptr<IntensityProvider>> offline_intensity_provider_from_spec(
    const std::string& spec, const std::string& unit = "gCO2eq/kWh");

// "2022-10-20T06:20:00Z" for Unix seconds (whole seconds, UTC).
std::string format_iso8601_utc(double unix_s);

// Parses "2022-10-20T06:20:00+00:00" / "...Z" / "...06:20:00.000Z" to Unix seconds.
// InvalidArgument naming the text.
Result<double> parse_iso8601_utc(const std::string& text);

}  // namespace zeus
