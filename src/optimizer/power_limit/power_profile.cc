#include "zeus/optimizer/power_profile.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

namespace zeus {
namespace {

using nlohmann::json;

tl::unexpected<Error> damaged(std::string_view source, const std::string& problem) {
  return fail(ErrorCode::kInvalidArgument,
              std::string(source) + " is not a valid power profile: " + problem);
}

// A JSON number holding a non-negative integer that fits uint32_t (300 or 300.0).
bool as_setting(const json& value, uint32_t* out) {
  if (value.is_number_unsigned()) {
    const auto v = value.get<uint64_t>();
    if (v > UINT32_MAX) return false;
    *out = static_cast<uint32_t>(v);
    return true;
  }
  if (value.is_number_float()) {
    const double v = value.get<double>();
    if (!(v >= 0 && v <= UINT32_MAX) || std::floor(v) != v) return false;
    *out = static_cast<uint32_t>(v);
    return true;
  }
  return false;
}

bool as_finite(const json& value, double* out) {
  if (!value.is_number()) return false;
  *out = value.get<double>();
  return std::isfinite(*out);
}

}  // namespace

std::string_view knob_name(OptimizerKnob knob) {
  return knob == OptimizerKnob::kSmClock ? "sm_clock" : "power_limit";
}

double profile_max_power_w(const PowerProfile& profile) {
  if (profile.max_power_w > 0) return profile.max_power_w;
  if (profile.knob != OptimizerKnob::kPowerLimit) return 0.0;
  return default_max_power_w(profile.measurements, std::max<uint32_t>(profile.gpu_count, 1));
}

std::string power_profile_to_json(const PowerProfile& profile) {
  const std::string key(knob_name(profile.knob));
  json entries = json::array();
  for (const KnobMeasurement& m : profile.measurements) {
    entries.push_back({{key, m.setting}, {"energy", m.energy_j}, {"time", m.time_s}});
  }
  json doc = {{"measurements", entries}, {"knob", key}};
  if (!profile.gpu_model.empty()) doc["gpu_model"] = profile.gpu_model;
  if (profile.gpu_count > 0) doc["gpu_count"] = profile.gpu_count;
  if (profile.max_power_w > 0) doc["max_power_w"] = profile.max_power_w;
  return doc.dump();
}

Result<PowerProfile> power_profile_from_json(std::string_view text, std::string_view source) {
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return damaged(source, "not JSON");
  if (!doc.is_object()) return damaged(source, "the top level is not an object");
  PowerProfile profile;
  if (doc.contains("knob")) {
    const json& knob = doc["knob"];
    if (knob == "power_limit") {
      profile.knob = OptimizerKnob::kPowerLimit;
    } else if (knob == "sm_clock") {
      profile.knob = OptimizerKnob::kSmClock;
    } else {
      return damaged(source, "\"knob\" must be \"power_limit\" or \"sm_clock\"");
    }
  }
  if (doc.contains("gpu_model")) {
    if (!doc["gpu_model"].is_string()) return damaged(source, "\"gpu_model\" is not a string");
    profile.gpu_model = doc["gpu_model"].get<std::string>();
  }
  if (doc.contains("gpu_count") && !as_setting(doc["gpu_count"], &profile.gpu_count)) {
    return damaged(source, "\"gpu_count\" is not a non-negative integer");
  }
  if (doc.contains("max_power_w") &&
      (!as_finite(doc["max_power_w"], &profile.max_power_w) || profile.max_power_w < 0)) {
    return damaged(source, "\"max_power_w\" is not a non-negative number");
  }
  if (!doc.contains("measurements") || !doc["measurements"].is_array()) {
    return damaged(source, "no \"measurements\" array");
  }
  const std::string key(knob_name(profile.knob));
  std::set<uint32_t> seen;
  size_t index = 0;
  for (const json& entry : doc["measurements"]) {
    const std::string where = "measurements[" + std::to_string(index++) + "]";
    if (!entry.is_object()) return damaged(source, where + " is not an object");
    KnobMeasurement m;
    if (!entry.contains(key) || !as_setting(entry[key], &m.setting)) {
      return damaged(source, where + " has no integer \"" + key + "\"");
    }
    if (!entry.contains("energy") || !as_finite(entry["energy"], &m.energy_j) || m.energy_j < 0) {
      return damaged(source, where + " has no non-negative number \"energy\"");
    }
    if (!entry.contains("time") || !as_finite(entry["time"], &m.time_s) || m.time_s <= 0) {
      return damaged(source, where + " has no positive number \"time\"");
    }
    if (!seen.insert(m.setting).second) {
      return damaged(source, where + " repeats " + key + " " + std::to_string(m.setting));
    }
    profile.measurements.push_back(m);
  }
  if (profile.measurements.empty()) return damaged(source, "\"measurements\" is empty");
  return profile;
}

Result<PowerProfile> load_power_profile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return fail(ErrorCode::kNotFound, "power profile '" + path + "' does not exist");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return fail(ErrorCode::kPermissionDenied,
                "cannot read power profile '" + path + "' (check its permissions)");
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return power_profile_from_json(buffer.str(), "power profile '" + path + "'");
}

Result<void> save_power_profile(const std::string& path, const PowerProfile& profile) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  if (ec) {
    return fail(ErrorCode::kPermissionDenied, "cannot create the folder of power profile '" +
                                                  path + "': " + ec.message());
  }
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << power_profile_to_json(profile) << "\n";
    out.flush();
    if (!out) {
      fs::remove(temporary, ec);
      return fail(ErrorCode::kPermissionDenied,
                  "cannot write power profile '" + path + "' (check the folder's permissions)");
    }
  }
  fs::rename(temporary, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    return fail(ErrorCode::kPermissionDenied,
                "cannot replace power profile '" + path + "': " + ec.message());
  }
  return ok();
}

Result<void> check_profile_matches(const PowerProfile& profile, OptimizerKnob knob,
                                   std::string_view gpu_model, std::string_view source) {
  if (profile.knob != knob) {
    return fail(ErrorCode::kInvalidArgument,
                std::string(source) + " profiles the " + std::string(knob_name(profile.knob)) +
                    " knob, but this optimizer turns " + std::string(knob_name(knob)) +
                    " (use another profile path)");
  }
  if (!profile.gpu_model.empty() && !gpu_model.empty() && profile.gpu_model != gpu_model) {
    return fail(ErrorCode::kInvalidArgument,
                std::string(source) + " was measured on a " + profile.gpu_model +
                    ", not on this " + std::string(gpu_model) +
                    " (use a profile path per GPU model, or delete the file to profile again)");
  }
  return ok();
}

}  // namespace zeus
