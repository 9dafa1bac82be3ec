#include "fake_nvml_state.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fake_nvml/fake_uuid.h"

namespace zeus::testing {
namespace {

using nlohmann::json;

int64_t realtime_ns() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

json clock_pair(const std::optional<std::pair<uint32_t, uint32_t>>& pair) {
  if (!pair) return nullptr;
  return json::array({pair->first, pair->second});
}

std::optional<std::pair<uint32_t, uint32_t>> clock_pair_from(const json& value) {
  if (!value.is_array() || value.size() != 2) return std::nullopt;
  return std::make_pair(value[0].get<uint32_t>(), value[1].get<uint32_t>());
}

json device_to_json(const FakeNvmlDevice& device, int64_t now_ns) {
  json out = {
      {"name", device.name},
      {"architecture", device.architecture},
      {"power_draw_mw", device.power_draw_mw},
      {"min_limit_mw", device.min_limit_mw},
      {"max_limit_mw", device.max_limit_mw},
      {"default_limit_mw", device.default_limit_mw},
      {"limit_mw", device.limit_mw},
      {"energy_mj", device.energy_mj},
      {"energy_time_ns", now_ns},
      {"persistence", device.persistence},
      {"memory_clocks_mhz", device.memory_clocks_mhz},
      {"graphics_clocks_mhz", device.graphics_clocks_mhz},
      {"locked_sm_clocks_mhz", clock_pair(device.locked_sm_clocks_mhz)},
      {"locked_memory_clocks_mhz", clock_pair(device.locked_memory_clocks_mhz)},
      {"errors", device.errors},
      {"lost", device.lost},
      {"power_fields", device.power_fields},
      {"memory_power_mw", device.memory_power_mw ? json(*device.memory_power_mw) : json(nullptr)},
      {"temperature_c", device.temperature_c},
      {"power_update_ms", device.power_update_ms},
      {"energy_update_ms", device.energy_update_ms},
      {"power_scopes", device.power_scopes},
      {"module_cpu_power_mw", device.module_cpu_power_mw},
  };
  if (!device.uuid.empty()) out["uuid"] = device.uuid;
  for (const auto& [function, after] : device.fail_after_calls) {
    out["fail_after_calls"][function] = {{"calls", after.calls}, {"error", after.error}};
  }
  if (device.energy_reset_after_calls) {
    out["energy_reset_after_calls"] = *device.energy_reset_after_calls;
  }
  return out;
}

// `file_ns`: the file's mtime, from which a device without energy_time_ns counts (as the fake).
FakeNvmlDevice device_from_json(const json& in, size_t index, int64_t now_ns, int64_t file_ns) {
  FakeNvmlDevice device;
  device.name = in.value("name", device.name);
  device.uuid = in.value("uuid", fake_nvml::default_uuid(index));
  device.architecture = in.value("architecture", device.architecture);
  device.power_draw_mw = in.value("power_draw_mw", device.power_draw_mw);
  device.min_limit_mw = in.value("min_limit_mw", device.min_limit_mw);
  device.max_limit_mw = in.value("max_limit_mw", device.max_limit_mw);
  device.default_limit_mw = in.value("default_limit_mw", device.max_limit_mw);
  device.limit_mw = in.value("limit_mw", device.default_limit_mw);
  device.persistence = in.value("persistence", device.persistence);
  device.memory_clocks_mhz = in.value("memory_clocks_mhz", device.memory_clocks_mhz);
  device.graphics_clocks_mhz = in.value("graphics_clocks_mhz", device.graphics_clocks_mhz);
  device.locked_sm_clocks_mhz = clock_pair_from(in.value("locked_sm_clocks_mhz", json()));
  device.locked_memory_clocks_mhz = clock_pair_from(in.value("locked_memory_clocks_mhz", json()));
  device.errors = in.value("errors", device.errors);
  device.lost = in.value("lost", device.lost);
  device.power_fields = in.value("power_fields", device.power_fields);
  const json memory = in.value("memory_power_mw", json());
  device.memory_power_mw =
      memory.is_number() ? std::optional<uint32_t>(memory.get<uint32_t>()) : std::nullopt;
  device.temperature_c = in.value("temperature_c", device.temperature_c);
  device.power_update_ms = in.value("power_update_ms", device.power_update_ms);
  device.energy_update_ms = in.value("energy_update_ms", device.energy_update_ms);
  device.power_scopes = in.value("power_scopes", device.power_scopes);
  device.module_cpu_power_mw = in.value("module_cpu_power_mw", device.module_cpu_power_mw);
  if (const auto after = in.find("fail_after_calls"); after != in.end() && after->is_object()) {
    for (const auto& [function, rule] : after->items()) {
      device.fail_after_calls[function] = {rule.value("calls", 0L), rule.value("error", 15)};
    }
  }
  if (const auto reset = in.find("energy_reset_after_calls");
      reset != in.end() && reset->is_number_integer()) {
    device.energy_reset_after_calls = reset->get<long>();
  }
  // The counter as the fake would report it now: stored value + current power x elapsed time.
  const double stored_mj = in.value("energy_mj", 0.0);
  const int64_t since_ns = in.value("energy_time_ns", file_ns);
  const uint32_t power_mw = std::min(device.power_draw_mw, device.limit_mw);
  const double elapsed_s = now_ns > since_ns ? (now_ns - since_ns) / 1e9 : 0.0;
  device.energy_mj = stored_mj + power_mw * elapsed_s;
  return device;
}

FakeNvmlDevice preset(const char* name, int architecture, uint32_t min_mw, uint32_t max_mw,
                      uint32_t draw_mw) {
  FakeNvmlDevice device;
  device.name = name;
  device.architecture = architecture;
  device.min_limit_mw = min_mw;
  device.max_limit_mw = max_mw;
  device.default_limit_mw = max_mw;
  device.limit_mw = max_mw;
  device.power_draw_mw = draw_mw;
  return device;
}

}  // namespace

FakeNvmlDevice FakeNvmlDevice::h100() {
  return preset("NVIDIA H100 80GB HBM3", 9, 200000, 700000, 350000);
}
FakeNvmlDevice FakeNvmlDevice::a100() {
  FakeNvmlDevice device = preset("NVIDIA A100-SXM4-40GB", 7, 100000, 400000, 250000);
  device.memory_power_mw = std::nullopt;
  return device;
}
// Before Hopper, NVML has no memory-scope power.
FakeNvmlDevice FakeNvmlDevice::v100() {
  FakeNvmlDevice device = preset("Tesla V100-SXM2-32GB", 5, 150000, 300000, 200000);
  device.memory_power_mw = std::nullopt;
  return device;
}
FakeNvmlDevice FakeNvmlDevice::p100() {
  FakeNvmlDevice device = preset("Tesla P100-PCIE-16GB", 4, 125000, 250000, 150000);
  device.memory_power_mw = std::nullopt;
  return device;
}

FakeNvmlDevice FakeNvmlDevice::gh200() {
  FakeNvmlDevice device = preset("NVIDIA GH200 480GB", 9, 100000, 900000, 400000);
  device.power_scopes = {"module"};
  device.module_cpu_power_mw = 120000;
  return device;
}
FakeNvmlDevice FakeNvmlDevice::gb10() {
  FakeNvmlDevice device = preset("NVIDIA GB10", 10, 5000, 140000, 40000);
  device.memory_power_mw = std::nullopt;
  device.module_cpu_power_mw = 30000;
  return device;
}

Result<void> write_fake_nvml_state(const std::string& path, const FakeNvmlState& state) {
  const int64_t now_ns = realtime_ns();
  json out = {{"init_error", state.init_error},
              {"errors", state.errors},
              {"devices", json::array()},
              {"set_power_limit_log", json::array()}};
  for (const FakeNvmlDevice& device : state.devices) {
    out["devices"].push_back(device_to_json(device, now_ns));
  }
  for (const FakeNvmlSetCall& call : state.set_power_limit_log) {
    out["set_power_limit_log"].push_back({{"index", call.index}, {"limit_mw", call.limit_mw}});
  }
  if (state.sm_clock_log) {
    out["sm_clock_log"] = json::array();
    for (const FakeNvmlClockCall& call : *state.sm_clock_log) {
      out["sm_clock_log"].push_back(
          {{"index", call.index}, {"min_mhz", call.min_mhz}, {"max_mhz", call.max_mhz}});
    }
  }
  const std::string temp = path + ".tmp.builder." + std::to_string(getpid());
  {
    std::ofstream file(temp, std::ios::trunc);
    if (!file) {
      return fail(ErrorCode::kNotFound,
                  "cannot write the fake NVML state " + temp + ": does its directory exist?");
    }
    file << out.dump(2) << "\n";
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    return fail(ErrorCode::kInternal, "cannot rename " + temp + " to " + path);
  }
  return ok();
}

Result<FakeNvmlState> read_fake_nvml_state(const std::string& path) {
  std::ifstream file(path);
  if (!file) return fail(ErrorCode::kNotFound, "fake NVML state " + path + " does not exist");
  std::stringstream text;
  text << file.rdbuf();
  json in = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (in.is_discarded() || !in.is_object()) {
    return fail(ErrorCode::kInvalidArgument, "fake NVML state " + path + " is not a JSON object");
  }
  const int64_t now_ns = realtime_ns();
  std::error_code error;
  const auto written = std::filesystem::last_write_time(path, error);
  const int64_t file_ns =
      error ? now_ns
            : std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::file_clock::to_sys(written).time_since_epoch())
                  .count();
  FakeNvmlState state;
  state.init_error = in.value("init_error", 0);
  state.errors = in.value("errors", state.errors);
  for (const json& device : in.value("devices", json::array())) {
    state.devices.push_back(device_from_json(device, state.devices.size(), now_ns, file_ns));
  }
  for (const json& call : in.value("set_power_limit_log", json::array())) {
    state.set_power_limit_log.push_back(
        {call.value("index", 0), call.value("limit_mw", static_cast<uint32_t>(0))});
  }
  if (const auto log = in.find("sm_clock_log"); log != in.end() && log->is_array()) {
    state.sm_clock_log.emplace();
    for (const json& call : *log) {
      state.sm_clock_log->push_back({call.value("index", 0),
                                     call.value("min_mhz", static_cast<uint32_t>(0)),
                                     call.value("max_mhz", static_cast<uint32_t>(0))});
    }
  }
  return state;
}

std::vector<uint32_t> FakeNvmlState::sm_clock_sequence_mhz(int index) const {
  std::vector<uint32_t> sequence;
  if (!sm_clock_log) return sequence;
  for (const FakeNvmlClockCall& call : *sm_clock_log) {
    if (call.index == index) sequence.push_back(call.max_mhz);
  }
  return sequence;
}

FakeNvmlEnvironment::FakeNvmlEnvironment(std::vector<FakeNvmlDevice> devices)
    : FakeNvmlEnvironment(FakeNvmlState{std::move(devices), {}, 0, {}}) {}

FakeNvmlEnvironment::FakeNvmlEnvironment(const FakeNvmlState& state) {
  std::string pattern = (std::filesystem::temp_directory_path() / "zeus_fake_nvml_XXXXXX").string();
  ZEUS_CHECK(mkdtemp(pattern.data()) != nullptr, "mkdtemp failed for " + pattern);
  directory_ = pattern;
  path_ = directory_ + "/nvml_state.json";
  if (const char* previous = std::getenv("ZEUS_FAKE_NVML_STATE")) previous_ = previous;
  write(state);
  setenv("ZEUS_FAKE_NVML_STATE", path_.c_str(), 1);
}

FakeNvmlEnvironment::~FakeNvmlEnvironment() {
  if (previous_) {
    setenv("ZEUS_FAKE_NVML_STATE", previous_->c_str(), 1);
  } else {
    unsetenv("ZEUS_FAKE_NVML_STATE");
  }
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

void FakeNvmlEnvironment::write(const FakeNvmlState& state) {
  auto written = write_fake_nvml_state(path_, state);
  ZEUS_CHECK(written.has_value(), written ? std::string() : written.error().to_string());
}

FakeNvmlState FakeNvmlEnvironment::read() const {
  auto state = read_fake_nvml_state(path_);
  ZEUS_CHECK(state.has_value(), state ? std::string() : state.error().to_string());
  return *state;
}

}  // namespace zeus::testing
