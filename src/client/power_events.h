// The client side of zeusd's power streams, without I/O: Server-Sent Events split out of the
// bytes as they arrive (pieces may cut an event anywhere), each event's "data:" decoded into a
// GPU or CPU reading (upstream zeusd's JSON, power_samples.h on the daemon's side), and the
// energy of each device integrated from its piecewise-constant power.
// Pure. Thread-safety: one object per thread (the client guards them with its lock).
//
//   SseSplitter sse;
//   for (const std::string& data : sse.feed(piece)) { auto e = parse_power_event(data, true); }
//   PowerIntegrator energy;  energy.set("gpu0", 350.0, t_s);  energy.energy_j("gpu0", now_s);
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zeus/common/result.h"

namespace zeus::client {

// Collects the data of whole events (the "data:" lines of each, joined by '\n'); comments and
// other fields are skipped, and a block of comments only (zeusd's keep-alive, sent when nothing
// changed for a second) is counted for take_keepalives(). A partial event waits for its end; one
// over max_event_bytes is dropped (and reported by overflowed()).
class SseSplitter {
 public:
  explicit SseSplitter(size_t max_event_bytes = 64 * 1024) : max_(max_event_bytes) {}
  std::vector<std::string> feed(std::string_view piece);
  bool overflowed() const { return overflowed_; }
  // Keep-alives seen since the last call: the daemon is there and its power holds.
  size_t take_keepalives() { return std::exchange(keepalives_, 0); }

 private:
  size_t max_;
  std::string buffer_;
  bool overflowed_ = false;
  size_t keepalives_ = 0;
};

// One reading: a GPU's power, or a CPU package's and its DRAM's.
struct PowerEvent {
  bool gpu = true;
  int device_id = 0;
  double timestamp_s = 0;  // the daemon's clock, Unix seconds
  double power_w = 0;      // GPU power or CPU package power
  std::optional<double> dram_w;
};

// The largest device id and the most power one device may report: a reading beyond either is
// refused, so one buggy or hostile daemon cannot poison a cluster's sums.
inline constexpr int kMaxDeviceId = 65535;
inline constexpr double kMaxDevicePowerW = 100000;  // 100 kW

// {"timestamp_ms", "gpu_id", "power_mw"} (gpu) or {"timestamp_ms", "cpu_id", "cpu_mw",
// "dram_mw"}; InvalidArgument naming what is missing or malformed, or a device id, time or power
// outside what a device reports (id above kMaxDeviceId, a negative or non-finite time, a power
// outside 0-kMaxDevicePowerW).
Result<PowerEvent> parse_power_event(std::string_view data, bool gpu);

// Energy of named devices whose power holds between readings (a zeusd stream sends a reading
// when the power changes): each reading closes the previous power's interval.
class PowerIntegrator {
 public:
  // `name` draws `power_w` from `time_s` on (a reading older than the last one takes effect at
  // the last one's time: a clock stepping back never stops the count).
  void set(const std::string& name, double power_w, double time_s);
  // `name` is no longer known (its stream dropped): its energy stops at `time_s`.
  void pause(const std::string& name, double time_s);
  // Energy since the first reading, up to `now_s`, in J (0 for an unknown name).
  double energy_j(const std::string& name, double now_s) const;
  // The power now, or nullopt while unknown or paused.
  std::optional<double> power_w(const std::string& name) const;
  // Every name seen.
  std::vector<std::string> names() const;

 private:
  struct Device {
    double power_w = 0;
    double since_s = 0;
    double energy_j = 0;  // up to since_s
    bool active = false;
  };
  std::map<std::string, Device> devices_;
};

}  // namespace zeus::client
