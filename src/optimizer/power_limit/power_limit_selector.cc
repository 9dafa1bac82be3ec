#include "zeus/optimizer/power_limit_selector.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

namespace zeus {
namespace {

// Shortest decimal that reads back as `value` ("0.5", "1.1").
std::string format_number(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  ZEUS_CHECK(ec == std::errc(), "to_chars failed on a finite double");
  return std::string(buffer, end);
}

// Parses the whole of `text` as a finite double.
bool parse_number(std::string_view text, double* out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(*out);
}

Result<void> validate(std::span<const KnobMeasurement> measurements) {
  if (measurements.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "no measurements to select from (profile at least one setting)");
  }
  std::set<uint32_t> seen;
  for (const KnobMeasurement& m : measurements) {
    if (!std::isfinite(m.energy_j) || !std::isfinite(m.time_s) || m.energy_j < 0 ||
        m.time_s <= 0) {
      return fail(ErrorCode::kInvalidArgument,
                  "measurement for setting " + std::to_string(m.setting) +
                      " has a negative or non-finite energy, or a non-positive time "
                      "(re-profile it)");
    }
    if (!seen.insert(m.setting).second) {
      return fail(ErrorCode::kInvalidArgument,
                  "setting " + std::to_string(m.setting) +
                      " is measured twice (keep one measurement per setting)");
    }
  }
  return ok();
}

const KnobMeasurement& highest_setting(std::span<const KnobMeasurement> measurements) {
  return *std::max_element(
      measurements.begin(), measurements.end(),
      [](const KnobMeasurement& a, const KnobMeasurement& b) { return a.setting < b.setting; });
}

// The measured settings, highest first, for messages ("300, 275, 250").
std::string settings_text(std::span<const KnobMeasurement> measurements) {
  std::vector<uint32_t> settings;
  for (const KnobMeasurement& m : measurements) settings.push_back(m.setting);
  std::sort(settings.rbegin(), settings.rend());
  std::string text;
  for (uint32_t s : settings) text += (text.empty() ? "" : ", ") + std::to_string(s);
  return text;
}

}  // namespace

double default_max_power_w(std::span<const KnobMeasurement> measurements, uint32_t gpu_count) {
  if (measurements.empty()) return 0.0;
  return static_cast<double>(highest_setting(measurements).setting) * gpu_count;
}

PowerLimitSelector PowerLimitSelector::min_energy() { return {Kind::kEnergy, 0.0}; }

PowerLimitSelector PowerLimitSelector::min_time() { return {Kind::kTime, 0.0}; }

Result<PowerLimitSelector> PowerLimitSelector::zeus_cost(double eta) {
  if (!(eta >= 0.0 && eta <= 1.0)) {
    return fail(ErrorCode::kInvalidArgument,
                "eta must be in [0, 1] (0 = fastest, 1 = least energy); got " +
                    (std::isfinite(eta) ? format_number(eta) : std::string("a non-finite value")));
  }
  return PowerLimitSelector(Kind::kZeusCost, eta);
}

Result<PowerLimitSelector> PowerLimitSelector::max_slowdown(double factor) {
  if (!(factor >= 1.0) || !std::isfinite(factor)) {
    return fail(ErrorCode::kInvalidArgument,
                "the max slowdown factor must be a finite number >= 1 (e.g. 1.1 = at most 10% "
                "slower than at the maximum limit); got " +
                    (std::isfinite(factor) ? format_number(factor) : std::string("a non-finite value")));
  }
  return PowerLimitSelector(Kind::kMaxSlowdown, factor);
}

Result<PowerLimitSelector> PowerLimitSelector::custom(std::string name, CustomSelect select) {
  if (!select) return fail(ErrorCode::kInvalidArgument, "a custom selector needs a function");
  if (name.empty()) return fail(ErrorCode::kInvalidArgument, "a custom selector needs a name");
  PowerLimitSelector selector(Kind::kCustom, 0.0);
  selector.custom_name_ = std::move(name);
  selector.custom_ = std::move(select);
  return selector;
}

Result<PowerLimitSelector> PowerLimitSelector::parse(std::string_view spec, double eta) {
  if (spec == "energy") return min_energy();
  if (spec == "time") return min_time();
  if (spec == "zeus") return zeus_cost(eta);
  const auto colon = spec.find(':');
  if (colon != std::string_view::npos) {
    std::string_view head = spec.substr(0, colon);
    double value = 0.0;
    if ((head == "zeus" || head == "slowdown") && !parse_number(spec.substr(colon + 1), &value)) {
      return fail(ErrorCode::kInvalidArgument, "selector '" + std::string(spec) +
                                                   "' has no number after ':' (e.g. "
                                                   "slowdown:1.1 or zeus:0.5)");
    }
    if (head == "zeus") return zeus_cost(value);
    if (head == "slowdown") return max_slowdown(value);
  }
  return fail(ErrorCode::kInvalidArgument,
              "unknown selector '" + std::string(spec) +
                  "' (use zeus, zeus:<eta>, energy, time or slowdown:<factor>)");
}

std::string PowerLimitSelector::name() const {
  switch (kind_) {
    case Kind::kEnergy:
      return "energy";
    case Kind::kTime:
      return "time";
    case Kind::kZeusCost:
      return "zeus:" + format_number(parameter_);
    case Kind::kMaxSlowdown:
      return "slowdown:" + format_number(parameter_);
    case Kind::kCustom:
      return custom_name_;
  }
  return "?";
}

Result<std::vector<double>> PowerLimitSelector::costs(
    std::span<const KnobMeasurement> measurements, double max_power_w) const {
  ZEUS_TRY(validate(measurements));
  if (kind_ == Kind::kCustom) {
    return fail(ErrorCode::kNotSupported,
                "the custom selector " + custom_name_ + " has no cost, only a choice (select())");
  }
  if (kind_ == Kind::kZeusCost && !(max_power_w > 0.0 && std::isfinite(max_power_w))) {
    return fail(ErrorCode::kInvalidArgument,
                "the zeus cost needs MaxPower > 0 W (the largest power limit x number of GPUs)");
  }
  const double reference_time_s = highest_setting(measurements).time_s;
  std::vector<double> costs;
  costs.reserve(measurements.size());
  for (const KnobMeasurement& m : measurements) {
    switch (kind_) {
      case Kind::kEnergy:
        costs.push_back(m.energy_j);
        break;
      case Kind::kTime:
        costs.push_back(m.time_s);
        break;
      case Kind::kZeusCost:
        costs.push_back(parameter_ * m.energy_j + (1.0 - parameter_) * max_power_w * m.time_s);
        break;
      case Kind::kMaxSlowdown:
        costs.push_back(m.time_s / reference_time_s);
        break;
      case Kind::kCustom:
        break;  // answered above
    }
  }
  return costs;
}

Result<uint32_t> PowerLimitSelector::select(std::span<const KnobMeasurement> measurements,
                                            double max_power_w) const {
  if (kind_ == Kind::kCustom) {
    ZEUS_TRY(validate(measurements));
    auto chosen = custom_(measurements, max_power_w);
    if (!chosen) return fail(chosen.error());
    for (const KnobMeasurement& m : measurements) {
      if (m.setting == *chosen) return *chosen;
    }
    return fail(ErrorCode::kInvalidArgument,
                "the custom selector " + custom_name_ + " chose " + std::to_string(*chosen) +
                    ", which is not a measured setting (it must return one of " +
                    settings_text(measurements) + ")");
  }
  auto costs_or = costs(measurements, max_power_w);
  if (!costs_or) return fail(costs_or.error());
  const std::vector<double>& c = *costs_or;
  const double reference_time_s = highest_setting(measurements).time_s;
  bool found = false;
  uint32_t best_setting = 0;
  double best_cost = 0.0;
  for (size_t i = 0; i < measurements.size(); ++i) {
    const uint32_t setting = measurements[i].setting;
    if (kind_ == Kind::kMaxSlowdown) {
      // Feasible settings only; among them the lowest.
      if (!(measurements[i].time_s <= parameter_ * reference_time_s)) continue;
      if (!found || setting < best_setting) best_setting = setting;
      found = true;
      continue;
    }
    if (!found || c[i] < best_cost || (c[i] == best_cost && setting > best_setting)) {
      best_setting = setting;
      best_cost = c[i];
      found = true;
    }
  }
  // The highest setting is always feasible for max slowdown (ratio 1 <= factor).
  ZEUS_CHECK(found, "no setting selected from a non-empty validated list");
  return best_setting;
}

}  // namespace zeus
