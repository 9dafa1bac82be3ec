#include "fake_nvml/fake_state.h"

#include "fake_nvml/fake_uuid.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>

namespace zeus::fake_nvml {
namespace {

using nlohmann::json;

void set_default(json& object, const char* key, const json& value) {
  if (!object.contains(key) || object[key].is_null()) object[key] = value;
}

int64_t mtime_ns(const struct stat& info) {
  return static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
}

// Reads and parses the file; `info` is its fstat taken before reading (so a writer that changes
// it meanwhile leaves a stamp older than the text, and the next refresh reads it again).
bool read_file(const std::string& path, json* out, struct stat* info) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::string text;
  bool ok = fstat(fd, info) == 0;
  char buffer[65536];
  while (ok) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ok = false;
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  if (!ok) return false;
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) return false;
  *out = std::move(parsed);
  return true;
}

}  // namespace

int64_t realtime_ns() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

void FakeState::normalise(json& state, int64_t epoch_ns, const json& previous) {
  set_default(state, "init_error", 0);
  set_default(state, "errors", json::object());
  set_default(state, "set_power_limit_log", json::array());
  if (!state.contains("devices") || !state["devices"].is_array()) {
    state["devices"] = json::array({json::object()});
  }
  const json* previous_devices =
      previous.is_object() && previous.contains("devices") && previous["devices"].is_array()
          ? &previous["devices"]
          : nullptr;
  size_t index = 0;
  for (json& device : state["devices"]) {
    const size_t at = index++;
    set_default(device, "name", "NVIDIA H100 80GB HBM3");
    set_default(device, "uuid", default_uuid(at));
    set_default(device, "architecture", 9);
    set_default(device, "pci_domain", 0);
    set_default(device, "pci_bus", static_cast<int>(at) + 1);
    set_default(device, "pci_device", 0);
    set_default(device, "power_draw_mw", 350000);
    set_default(device, "min_limit_mw", 200000);
    set_default(device, "max_limit_mw", 700000);
    set_default(device, "default_limit_mw", device["max_limit_mw"]);
    set_default(device, "limit_mw", device["default_limit_mw"]);
    if (!device.contains("energy_time_ns") || device["energy_time_ns"].get<int64_t>() <= 0) {
      if ((!device.contains("energy_mj") || device["energy_mj"].is_null()) &&
          previous_devices != nullptr && at < previous_devices->size()) {
        device["energy_mj"] = energy_mj_at((*previous_devices)[at], epoch_ns);
      }
      device["energy_time_ns"] = epoch_ns;
    }
    set_default(device, "energy_mj", 0.0);
    set_default(device, "persistence", false);
    set_default(device, "memory_clocks_mhz", json::array({2619, 1593}));
    set_default(device, "graphics_clocks_mhz", json::array({1980, 1755, 1500, 1200, 900, 600}));
    set_default(device, "locked_sm_clocks_mhz", nullptr);
    set_default(device, "locked_memory_clocks_mhz", nullptr);
    set_default(device, "errors", json::object());
    set_default(device, "lost", false);
    set_default(device, "power_fields", true);
    set_default(device, "memory_power_mw", nullptr);
    set_default(device, "power_scopes", json::array({"gpu"}));
    set_default(device, "module_cpu_power_mw", 0);
    set_default(device, "temperature_c", 45);
    set_default(device, "power_update_ms", 0);
    set_default(device, "energy_update_ms", 0);
    set_default(device, "fail_after_calls", json::object());
    set_default(device, "energy_reset_after_calls", nullptr);
  }
}

bool FakeState::load() {
  const char* path = std::getenv("ZEUS_FAKE_NVML_STATE");
  const std::string previous_path = path_;
  path_ = path != nullptr ? path : "";
  if (path_ != previous_path) state_ = json();  // counters carry over only within one file
  if (path_.empty()) {
    state_ = json::object();
    normalise(state_, realtime_ns(), json());
    return true;
  }
  if (reload()) return true;
  state_ = json::object();
  normalise(state_, realtime_ns(), json());
  return false;
}

FakeState::FileStamp FakeState::stamp_now() const {
  struct stat info {};
  if (::stat(path_.c_str(), &info) != 0) return FileStamp{};
  return FileStamp{info.st_dev, info.st_ino, info.st_size, mtime_ns(info)};
}

void FakeState::refresh() {
  if (path_.empty()) return;
  const FileStamp now = stamp_now();
  if (now.size < 0 || now == stamp_) return;
  (void)reload();
}

bool FakeState::reload() {
  json fresh;
  struct stat info {};
  if (!read_file(path_, &fresh, &info)) return false;
  normalise(fresh, mtime_ns(info), state_);
  state_ = std::move(fresh);
  stamp_ = FileStamp{info.st_dev, info.st_ino, info.st_size, mtime_ns(info)};
  return true;
}

bool FakeState::lock_and_reload() {
  if (path_.empty()) return true;
  lock_fd_ = ::open((path_ + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ >= 0) flock(lock_fd_, LOCK_EX);
  return reload();
}

void FakeState::write_and_unlock() {
  if (path_.empty()) return;
  if (!state_.empty()) {
    const std::string temp = path_ + ".tmp." + std::to_string(getpid());
    bool written = false;
    {
      std::ofstream out(temp, std::ios::trunc);
      out << state_.dump(2) << "\n";
      written = static_cast<bool>(out);
    }
    // A client that may not write the file (a read-only user) keeps its change in memory.
    if (written && std::rename(temp.c_str(), path_.c_str()) == 0) {
      stamp_ = stamp_now();
    } else {
      std::remove(temp.c_str());
    }
  }
  if (lock_fd_ >= 0) {
    flock(lock_fd_, LOCK_UN);
    ::close(lock_fd_);
    lock_fd_ = -1;
  }
}

int FakeState::injected_error(const std::string& function, int index, long call_number) const {
  std::string plain = function;
  if (plain.size() > 3 && plain.compare(plain.size() - 3, 3, "_v2") == 0) {
    plain.resize(plain.size() - 3);
  }
  auto find = [&](const json& table) -> const json* {
    if (!table.is_object()) return nullptr;
    if (auto it = table.find(function); it != table.end()) return &*it;
    if (auto it = table.find(plain); it != table.end()) return &*it;
    return nullptr;
  };
  auto lookup = [&](const json& errors) -> int {
    const json* code = find(errors);
    return code != nullptr ? code->get<int>() : 0;
  };
  if (index >= 0 && static_cast<size_t>(index) < device_count()) {
    const json& dev = device(static_cast<size_t>(index));
    if (dev["lost"].get<bool>()) return 15;  // NVML_ERROR_GPU_IS_LOST
    if (int code = lookup(dev["errors"]); code != 0) return code;
    if (const json* after = find(dev["fail_after_calls"]); after != nullptr) {
      if (call_number > after->value("calls", 0L)) return after->value("error", 15);
    }
  }
  return lookup(state_["errors"]);
}

uint32_t FakeState::power_mw(const json& device) {
  uint32_t draw_mw = device["power_draw_mw"].get<uint32_t>();
  // Opt-in: the draw at the locked SM clock (a compute-bound GPU's power follows its clock).
  const auto by_clock = device.find("power_draw_mw_by_sm_mhz");
  const auto locked = device.find("locked_sm_clocks_mhz");
  if (by_clock != device.end() && by_clock->is_object() && locked != device.end() &&
      locked->is_array() && locked->size() == 2) {
    const auto at = by_clock->find(std::to_string((*locked)[1].get<uint32_t>()));
    if (at != by_clock->end() && at->is_number_unsigned()) draw_mw = at->get<uint32_t>();
  }
  const uint32_t limit_mw = device["limit_mw"].get<uint32_t>();
  return draw_mw < limit_mw ? draw_mw : limit_mw;
}

uint32_t FakeState::reported_power_mw(const json& device, int64_t now_ns) {
  const uint32_t power = power_mw(device);
  const int64_t period_ms = device["power_update_ms"].get<int64_t>();
  if (period_ms <= 0) return power;
  // Offsets -300, +100, -100, +300 mW in turn: every period reads differently, mean zero.
  static constexpr int kOffsetsMw[] = {-300, 100, -100, 300};
  const int64_t period = now_ns / (period_ms * 1000000);
  const int offset_mw = kOffsetsMw[period % 4];
  return offset_mw < 0 && power < static_cast<uint32_t>(-offset_mw) ? power : power + offset_mw;
}

bool FakeState::has_power_scope(const json& device, const std::string& scope) {
  for (const json& listed : device["power_scopes"]) {
    if (listed.is_string() && listed.get<std::string>() == scope) return true;
  }
  return false;
}

double FakeState::energy_mj_at(const json& device, int64_t now_ns) {
  const int64_t since_ns = device["energy_time_ns"].get<int64_t>();
  const double elapsed_s = now_ns > since_ns ? (now_ns - since_ns) / 1e9 : 0.0;
  const bool module_only = !has_power_scope(device, "gpu") && has_power_scope(device, "module");
  const double power =
      power_mw(device) + (module_only ? device["module_cpu_power_mw"].get<double>() : 0.0);
  return device["energy_mj"].get<double>() + power * elapsed_s;
}

double FakeState::published_energy_mj(const json& device, int64_t now_ns) {
  const int64_t period_ms = device["energy_update_ms"].get<int64_t>();
  if (period_ms <= 0) return energy_mj_at(device, now_ns);
  const int64_t period_ns = period_ms * 1000000;
  return energy_mj_at(device, now_ns / period_ns * period_ns);
}

void FakeState::bring_energy_up_to_date(json& device) {
  const int64_t now_ns = realtime_ns();
  device["energy_mj"] = energy_mj_at(device, now_ns);
  device["energy_time_ns"] = now_ns;
}

}  // namespace zeus::fake_nvml
