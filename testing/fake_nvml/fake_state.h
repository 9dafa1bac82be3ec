// The fake NVML's device state: a JSON document kept in memory, loaded from the file named by
// ZEUS_FAKE_NVML_STATE at nvmlInit, re-read before a call whenever another process changed the
// file (its inode, size or mtime differ from what this process last read or wrote), and written
// back (flock + atomic rename) only after a change this process made, so read-only clients never
// write. The format is documented in testing/fake_nvml_state.h.
//
// Energy is a counter that grows at the device's current power (min(draw, limit)) with
// CLOCK_REALTIME: each device keeps `energy_mj` and `energy_time_ns`, the time it was last
// brought up to date, so every process reading the file computes the same growth. A device whose
// file entry lacks `energy_time_ns` counts from the file's mtime (the same in every process); on
// a re-read, one that also lacks `energy_mj` carries its counter over, so rewriting a device's
// power does not rewind its counter.
// Thread-safety: none here; fake_nvml.cc serialises every call with one mutex.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace zeus::fake_nvml {

// Now, in CLOCK_REALTIME nanoseconds.
int64_t realtime_ns();

// The whole state: {"init_error", "errors", "devices": [...], "set_power_limit_log": [...]}.
class FakeState {
 public:
  // (Re)loads from ZEUS_FAKE_NVML_STATE, or builds the default one-H100 state when unset.
  // Returns false when the file is unreadable or not JSON (nvmlInit then fails). Writes nothing.
  bool load();

  // Re-reads the file when another process changed it since this one last read or wrote it (one
  // stat() when nothing changed). A file caught half-written keeps the state as it was.
  void refresh();

  // Applies `change` to the freshest state: with a file, under its lock, re-read, changed,
  // written back atomically; without one, in memory. Call after a successful load().
  template <typename Change>
  void mutate(Change change) {
    lock_and_reload();
    change(state_);
    write_and_unlock();
  }

  const nlohmann::json& document() const { return state_; }
  size_t device_count() const { return state_["devices"].size(); }
  const nlohmann::json& device(size_t index) const { return state_["devices"][index]; }

  // The code injected for `function` on device `index` (index < 0: a device-less call), whose
  // `call_number`-th call (in this process, counting from 1) this is: "lost" devices answer
  // GPU_IS_LOST to everything; then the device's "errors", its "fail_after_calls" (the first
  // `calls` calls succeed, later ones answer `error`), then the global "errors". A name with a
  // "_v2" suffix also matches its plain name. 0 when nothing is injected.
  int injected_error(const std::string& function, int index, long call_number) const;

  // Current power in mW: min(power_draw_mw, limit_mw).
  static uint32_t power_mw(const nlohmann::json& device);
  // The power a reading reports at `now_ns`: power_mw(), plus, when the device has
  // "power_update_ms" > 0, a small offset (mean zero over 4 periods) that changes at every
  // multiple of that period, as a driver's counter that updates every so often.
  static uint32_t reported_power_mw(const nlohmann::json& device, int64_t now_ns);
  // True when the device's "power_scopes" lists `scope` ("gpu" or "module").
  static bool has_power_scope(const nlohmann::json& device, const std::string& scope);
  // Energy in mJ at `now_ns` (module power when the device answers only the module scope: a
  // superchip's counter covers its CPU too).
  static double energy_mj_at(const nlohmann::json& device, int64_t now_ns);
  // What the energy counter reads at now_ns: energy_mj_at(now_ns), or with "energy_update_ms" > 0
  // its value at the last multiple of that period (a driver that publishes the counter in steps,
  // ~100 ms on an H200), never below the value last stored in the file.
  static double published_energy_mj(const nlohmann::json& device, int64_t now_ns);
  // Brings the device's energy up to now (call before changing its power).
  static void bring_energy_up_to_date(nlohmann::json& device);

 private:
  // What identifies one version of the file.
  struct FileStamp {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = -1;
    int64_t mtime_ns = 0;
    bool operator==(const FileStamp&) const = default;
  };
  // The file's stamp now; nullopt-like (size -1) when it cannot be stat'ed.
  FileStamp stamp_now() const;
  // Reads the file into the state (normalised against the previous one); false (state
  // unchanged) when it cannot be read or parsed.
  bool reload();
  // Takes the file's lock and re-reads it; false (state unchanged) when it cannot be read.
  bool lock_and_reload();
  void write_and_unlock();
  // Fills every missing key with its default; devices without a counter time count from
  // `epoch_ns` and, lacking energy_mj too, carry over `previous`'s counter at that time.
  static void normalise(nlohmann::json& state, int64_t epoch_ns, const nlohmann::json& previous);

  nlohmann::json state_;
  std::string path_;  // empty: in memory only
  FileStamp stamp_;   // of the version last read or written
  int lock_fd_ = -1;
};

}  // namespace zeus::fake_nvml
