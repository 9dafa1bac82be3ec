// ConstantIntensity, the offline provider names and the ISO 8601 formatting
// (zeus/monitor/intensity_provider.h).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <limits>

#include "zeus/monitor/intensity_provider.h"

namespace zeus {
namespace {

std::string number_text(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

}  // namespace

Result<std::unique_ptr<ConstantIntensity>> ConstantIntensity::create(double value, std::string unit) {
  if (!std::isfinite(value) || value < 0) {
    return fail(ErrorCode::kInvalidArgument,
                "a constant value per kWh must be finite and not negative, not " + number_text(value));
  }
  auto provider = std::make_unique<ConstantIntensity>();
  provider->value_ = value;
  provider->unit_ = std::move(unit);
  return provider;
}

double ConstantIntensity::next_boundary_after(double /*unix_s*/) const {
  return std::numeric_limits<double>::infinity();
}

Result<double> ConstantIntensity::value_at(double /*unix_s*/) { return value_; }

std::string ConstantIntensity::describe() const { return "const " + number_text(value_) + " " + unit_; }

Result<std::unique_ptr<IntensityProvider>> offline_intensity_provider_from_spec(
    const std::string& spec, const std::string& unit) {
  const std::string forms = "the offline forms are const:VALUE (per kWh) and csv:FILE[:LOCATION]";
  const size_t colon = spec.find(':');
  const std::string kind = colon == std::string::npos ? spec : spec.substr(0, colon);
  const std::string rest = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (kind == "const" && colon != std::string::npos) {
    char* end = nullptr;
    const double value = std::strtod(rest.c_str(), &end);
    if (rest.empty() || *end != '\0') {
      return fail(ErrorCode::kInvalidArgument,
                  "provider '" + spec + "': const needs a number per kWh, like const:420");
    }
    auto provider = ConstantIntensity::create(value, unit);
    if (!provider) return fail(provider.error());
    return std::unique_ptr<IntensityProvider>(std::move(*provider));
  }
  if (kind == "csv" && colon != std::string::npos) {
    const size_t location = rest.rfind(':');
    auto series = location == std::string::npos
                      ? load_intensity_csv(rest, "", unit)
                      : load_intensity_csv(rest.substr(0, location), rest.substr(location + 1), unit);
    if (!series) return fail(series.error());
    return std::unique_ptr<IntensityProvider>(std::move(*series));
  }
  if (kind == "electricitymaps" || kind == "openei") {
    return fail(ErrorCode::kInvalidArgument,
                "provider '" + spec + "' is online: its answers change with the day it is asked, so a "
                "replay would not be reproducible; save its history as a CSV and give csv:FILE, or a "
                "what-if constant (" + forms + ")");
  }
  return fail(ErrorCode::kInvalidArgument, "provider '" + spec + "' is not one this accepts; " + forms);
}

std::string format_iso8601_utc(double unix_s) {
  const time_t whole = static_cast<time_t>(std::floor(unix_s));
  std::tm parts{};
  gmtime_r(&whole, &parts);
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

}  // namespace zeus
