// The state model of the fake rocm_smi library, shared (header-only) by the fake library itself
// and by the test-side builder testing/fake_rocm_smi_state.h.
//
// State is a JSON file named by ZEUS_FAKE_ROCM_SMI_STATE (unset: one default device, in memory):
//   {"time_ns": 1000000000,            // fixed fake time; absent or null = CLOCK_REALTIME
//    "errors": {"rsmi_dev_power_cap_set": 4},   // rsmi function -> status it returns
//    "devices": [{"name": "AMD Instinct MI250X", "unique_id": 1234, "serial": "...",
//      "power_uw": 300000000, "average_power_uw": 290000000,
//      "cap_uw": 500000000, "default_cap_uw": 500000000, "min_cap_uw": 100000000,
//      "max_cap_uw": 560000000,
//      "energy_count": 0, "energy_time_ns": 0,     // count at energy_time_ns (may be fractional)
//      "energy_resolution_uj": 15.3, "energy_scale": 1.0, "energy_frozen": false,
//      "sclk_mhz": [500, 1000, 1700], "mclk_mhz": [400, 1600],
//      "sclk_range_mhz": [], "mclk_range_mhz": [], "perf_level": 0, "lost": false}]}
// The counter grows by power_uw x energy_scale x elapsed time / resolution (uW x s = uJ).
// A device with "lost": true answers RSMI_STATUS_FILE_ERROR to every call.
// Files are read and written under flock(<path>.lock); writes go to a temp file then rename().
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace zeus::fake_rocm_smi {

using nlohmann::json;

// A device with every field set to a plausible MI250X-like value.
inline json default_device(int index) {
  return json{{"name", "AMD Instinct MI250X"},
              {"unique_id", 0x1000 + index},
              {"serial", "FAKE" + std::to_string(index)},
              {"power_uw", 300000000},
              {"cap_uw", 500000000},
              {"default_cap_uw", 500000000},
              {"min_cap_uw", 100000000},
              {"max_cap_uw", 560000000},
              {"energy_count", 0.0},
              {"energy_time_ns", 0},
              {"energy_resolution_uj", 15.3},
              {"energy_scale", 1.0},
              {"energy_frozen", false},
              {"sclk_mhz", {500, 1000, 1700}},
              {"mclk_mhz", {400, 1600}},
              {"sclk_range_mhz", json::array()},
              {"mclk_range_mhz", json::array()},
              {"perf_level", 0},
              {"lost", false}};
}

inline json default_state(int num_devices) {
  json state{{"errors", json::object()}, {"devices", json::array()}};
  for (int i = 0; i < num_devices; ++i) state["devices"].push_back(default_device(i));
  return state;
}

// Fake time in ns: the state's fixed "time_ns", or CLOCK_REALTIME.
inline uint64_t now_ns(const json& state) {
  auto it = state.find("time_ns");
  if (it != state.end() && it->is_number()) return it->get<uint64_t>();
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// The counter value (fractional counts) of `device` at `time_ns`.
inline double energy_count_at(const json& device, uint64_t time_ns) {
  double count = device.value("energy_count", 0.0);
  if (device.value("energy_frozen", false)) return count;
  uint64_t since_ns = device.value("energy_time_ns", uint64_t{0});
  double elapsed_s = time_ns > since_ns ? static_cast<double>(time_ns - since_ns) / 1e9 : 0.0;
  double energy_uj = device.value("power_uw", 0.0) * device.value("energy_scale", 1.0) * elapsed_s;
  return count + energy_uj / device.value("energy_resolution_uj", 15.3);
}

// Folds the energy accumulated so far into energy_count, so that a later change of power or
// scale applies from now on only.
inline void settle_energy(json& device, uint64_t time_ns) {
  device["energy_count"] = energy_count_at(device, time_ns);
  device["energy_time_ns"] = time_ns;
}

// Holds flock(<path>.lock) for its lifetime.
class FileLock {
 public:
  FileLock(const std::string& path, bool exclusive) {
    fd_ = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd_ >= 0) ::flock(fd_, exclusive ? LOCK_EX : LOCK_SH);
  }
  ~FileLock() {
    if (fd_ >= 0) {
      ::flock(fd_, LOCK_UN);
      ::close(fd_);
    }
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

// Reads the state file; false when it is missing or not JSON (the caller keeps its state).
inline bool read_state_unlocked(const std::string& path, json* state) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream text;
  text << in.rdbuf();
  json parsed = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) return false;
  *state = std::move(parsed);
  return true;
}

inline bool write_state_unlocked(const std::string& path, const json& state) {
  std::string temp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::trunc);
    if (!out) return false;
    out << state.dump(2) << "\n";
    if (!out) return false;
  }
  return std::rename(temp.c_str(), path.c_str()) == 0;
}

inline bool read_state(const std::string& path, json* state) {
  FileLock lock(path, /*exclusive=*/false);
  return read_state_unlocked(path, state);
}

// Read-modify-write under the exclusive lock. `edit` is called with the current state.
template <typename Edit>
bool update_state(const std::string& path, Edit edit) {
  FileLock lock(path, /*exclusive=*/true);
  json state;
  if (!read_state_unlocked(path, &state)) return false;
  edit(state);
  return write_state_unlocked(path, state);
}

}  // namespace zeus::fake_rocm_smi
