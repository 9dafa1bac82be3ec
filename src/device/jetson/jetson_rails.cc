#include "device/jetson/jetson_rails.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <map>

#include "common/sysfs.h"

namespace zeus {
namespace {

constexpr const char* kDrivers[] = {"ina3221x", "ina3221", "ina238"};

bool is_file(const std::string& path) {
  std::error_code ignored;
  return std::filesystem::is_regular_file(path, ignored);
}

bool is_directory(const std::string& path) {
  std::error_code ignored;
  return std::filesystem::is_directory(path, ignored);
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Adds the rail `label` of channel `channel` in `dir` when its kind is used
// and its files are there.
void add_rail(const std::string& dir, const std::string& label, const std::string& channel,
              bool hwmon, std::map<JetsonRailKind, JetsonRail>* rails) {
  auto kind = classify_jetson_rail(label);
  if (!kind) return;
  JetsonRail rail;
  rail.kind = *kind;
  rail.label = label;
  const std::string power =
      dir + (hwmon ? "/power" + channel + "_input" : "/in_power" + channel + "_input");
  const std::string voltage =
      dir + (hwmon ? "/in" + channel + "_input" : "/in_voltage" + channel + "_input");
  const std::string current =
      dir + (hwmon ? "/curr" + channel + "_input" : "/in_current" + channel + "_input");
  if (is_file(power)) {
    rail.power_path = power;
    rail.power_scale_mw = hwmon ? 1e-3 : 1.0;  // hwmon power is in uW
  } else if (is_file(voltage) && is_file(current)) {
    rail.voltage_path = voltage;
    rail.current_path = current;
  } else {
    return;  // not enough files for a power
  }
  (*rails)[*kind] = std::move(rail);
}

// The rails named in one directory (a monitor device or its hwmon child).
void scan(const std::string& dir, std::map<JetsonRailKind, JetsonRail>* rails) {
  auto entries = list_directory(dir);
  if (!entries) return;
  for (const auto& entry : *entries) {
    if (starts_with(entry, "in") && ends_with(entry, "_label")) {
      const std::string channel = entry.substr(2, entry.size() - 2 - 6);
      if (channel.empty()) continue;
      auto label = read_text_file(dir + "/" + entry);
      if (label) add_rail(dir, *label, channel, true, rails);
    } else if (starts_with(entry, "rail_name_")) {
      auto label = read_text_file(dir + "/" + entry);
      if (label) add_rail(dir, *label, entry.substr(10), false, rails);
    }
  }
}

Result<double> read_number(const std::string& path, const JetsonRail& rail) {
  auto text = read_text_file(path);
  if (!text) {
    if (text.error().code == ErrorCode::kNotFound) {
      return fail(ErrorCode::kNotFound, "Jetson power rail " + rail.label +
                                            " disappeared: " + path + " no longer exists");
    }
    return fail(text.error());
  }
  double value = 0.0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end) {
    return fail(ErrorCode::kInternal, path + " holds \"" + *text + "\", not a number");
  }
  return value;
}

}  // namespace

std::string jetson_rail_kind_name(JetsonRailKind kind) {
  switch (kind) {
    case JetsonRailKind::kCpu:
      return "cpu";
    case JetsonRailKind::kGpu:
      return "gpu";
    case JetsonRailKind::kTotal:
      break;
  }
  return "total";
}

std::optional<JetsonRailKind> classify_jetson_rail(const std::string& label) {
  const std::string name = lower(label);
  if (name.find("cpu") != std::string::npos) return JetsonRailKind::kCpu;
  if (name.find("gpu") != std::string::npos) return JetsonRailKind::kGpu;
  if (name.find("system") != std::string::npos || name.find("_in") != std::string::npos ||
      name.find("total") != std::string::npos || starts_with(name, "vin")) {
    return JetsonRailKind::kTotal;
  }
  return std::nullopt;
}

Result<std::vector<JetsonRail>> find_jetson_rails(const std::string& sysfs_root) {
  std::map<JetsonRailKind, JetsonRail> rails;
  bool monitor = false;
  for (const char* driver : kDrivers) {
    const std::string driver_dir = sysfs_root + "/bus/i2c/drivers/" + driver;
    auto devices = list_directory(driver_dir);
    if (!devices) continue;
    for (const auto& device : *devices) {
      const std::string device_dir = driver_dir + "/" + device;
      if (!is_directory(device_dir)) continue;  // bind, unbind, uevent
      monitor = true;
      // As upstream: each child of the device (iio:device0 on Xavier, hwmon/ on newer kernels)
      // and that child's hwmon* entries (hwmon/hwmon3).
      auto children = list_directory(device_dir);
      if (!children) continue;
      for (const auto& child : *children) {
        const std::string child_dir = device_dir + "/" + child;
        if (!is_directory(child_dir)) continue;
        scan(child_dir, &rails);
        auto inner = list_directory(child_dir);
        if (!inner) continue;
        for (const auto& n : *inner) {
          if (starts_with(n, "hwmon") && is_directory(child_dir + "/" + n)) {
            scan(child_dir + "/" + n, &rails);
          }
        }
      }
    }
  }
  if (rails.empty()) {
    return fail(ErrorCode::kNotFound, monitor
                                          ? "the Jetson power monitors under " + sysfs_root +
                                                "/bus/i2c/drivers have no CPU, GPU or total rail"
                                          : "no INA3221/INA238 power monitor under " + sysfs_root +
                                                "/bus/i2c/drivers (not an NVIDIA Jetson)");
  }
  std::vector<JetsonRail> out;
  for (auto& [kind, rail] : rails) out.push_back(std::move(rail));
  return out;
}

Result<double> read_jetson_rail_mw(const JetsonRail& rail) {
  if (!rail.power_path.empty()) {
    auto power = read_number(rail.power_path, rail);
    if (!power) return fail(power.error());
    return *power * rail.power_scale_mw;
  }
  auto voltage_mv = read_number(rail.voltage_path, rail);
  if (!voltage_mv) return fail(voltage_mv.error());
  auto current_ma = read_number(rail.current_path, rail);
  if (!current_ma) return fail(current_ma.error());
  return *voltage_mv * *current_ma / 1000.0;
}

}  // namespace zeus
