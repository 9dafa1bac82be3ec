// The samples of zeusd's power streams (/gpu/stream_power, /cpu/stream_power) and the decisions
// behind them, without I/O: which GPU readings are worth an event (a change), and a CPU's package
// and DRAM power from two RAPL energy readings over the time measured between them. The JSON of
// each sample is the event's data, with upstream zeusd's field names:
//   GPU: {"timestamp_ms": 1700000000000, "gpu_id": 0, "power_mw": 350000}
//   CPU: {"timestamp_ms": 1700000000000, "cpu_id": 0, "cpu_mw": 95000, "dram_mw": 12000|null}
// Pure: values in, values out. Thread-safety: one object per thread (the poller's).
//
//   GpuChangeFilter filter;
//   if (filter.changed(0, 350000)) send(event_json(GpuPowerSample{now_ms, 0, 350000}));
//   CpuPowerMeter meter;  meter.update({package_uj, dram_uj, t_s});  // nullopt the first time
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace zeus::zeusd {

struct GpuPowerSample {
  uint64_t timestamp_ms = 0;  // Unix time
  int gpu_id = 0;
  uint32_t power_mw = 0;
};

struct CpuPowerSample {
  uint64_t timestamp_ms = 0;
  int cpu_id = 0;
  uint32_t cpu_mw = 0;
  std::optional<uint32_t> dram_mw;  // none without a DRAM zone
};

// Compact JSON, one line (the "data:" of one event).
std::string event_json(const GpuPowerSample& sample);
std::string event_json(const CpuPowerSample& sample);

// Remembers each GPU's last reading: a reading is news when it differs (or is the first).
class GpuChangeFilter {
 public:
  bool changed(int gpu_id, uint32_t power_mw);
  void reset() { last_.clear(); }  // the poller paused: the next reading is news again

 private:
  std::map<int, uint32_t> last_;
};

// One CPU's counters at one time (cumulative, monotone uJ; steady clock seconds).
struct RaplReading {
  uint64_t package_uj = 0;
  std::optional<uint64_t> dram_uj;
  double time_s = 0;
};

struct CpuPowerMw {
  uint32_t cpu_mw = 0;
  std::optional<uint32_t> dram_mw;
  bool operator==(const CpuPowerMw&) const = default;
};

// Power of one CPU from consecutive readings: energy delta / the elapsed time measured between
// them (not the nominal poll period, so a late tick does not inflate the power).
class CpuPowerMeter {
 public:
  // The power since the previous reading; nullopt for the first (a baseline) or when no time
  // passed. A counter that went backwards counts as no energy.
  std::optional<CpuPowerMw> update(const RaplReading& reading);
  void reset() { last_.reset(); }

 private:
  std::optional<RaplReading> last_;
};

}  // namespace zeus::zeusd
