// RaplCpu: one CPU package measured through the Linux powercap RAPL interface.
//
// Zones: <root>/intel-rapl:N (name "package-N") and its sub-zone intel-rapl:N:M named "dram".
// Each zone's energy_uj is a counter that wraps at max_energy_range_uj; RaplCpu tracks the
// wraparounds so package_energy_uj() / dram_energy_uj() are monotone microjoules since the object
// was created. Reads must come more often than one wrap period (minutes to hours at full power).
// Thread-safety: every method may be called from several threads (a mutex guards the counters).
// Failure: PermissionDenied when energy_uj is unreadable — it needs root since Linux 5.10
// (CVE-2020-8694) — with the fix in the message; NotFound when the tree has no package zones.
//
//   auto cpus = zeus::open_rapl_cpus("/sys/class/powercap");
//   auto before_uj = (*cpus)[0]->package_energy_uj();
//   work();  auto used_uj = *(*cpus)[0]->package_energy_uj() - *before_uj;
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/device/device.h"

namespace zeus {

// One RAPL zone's energy counter with wraparound tracking. Not thread-safe (RaplCpu locks).
class RaplZoneCounter {
 public:
  // Reads <zone_dir>/max_energy_range_uj and the first energy_uj (the baseline).
  static Result<RaplZoneCounter> open(const std::string& zone_dir);
  // uJ since open(): adds (current - previous), or on a wrap (current < previous)
  // (max_energy_range_uj - previous + current).
  Result<uint64_t> energy_uj();
  // The first energy_uj read at open() (the baseline energy_uj() counts from).
  uint64_t start_raw_uj() const { return start_raw_uj_; }

 private:
  RaplZoneCounter(std::string energy_path, uint64_t max_energy_range_uj, uint64_t last_raw_uj)
      : energy_path_(std::move(energy_path)),
        max_energy_range_uj_(max_energy_range_uj),
        last_raw_uj_(last_raw_uj),
        start_raw_uj_(last_raw_uj) {}
  std::string energy_path_;
  uint64_t max_energy_range_uj_;
  uint64_t last_raw_uj_;
  uint64_t start_raw_uj_;
  uint64_t total_uj_ = 0;
};

class RaplCpu final : public Cpu {
 public:
  // Package `index` (the N of intel-rapl:N) named `name`, with an optional DRAM sub-zone.
  RaplCpu(int index, std::string name, RaplZoneCounter package,
          std::optional<RaplZoneCounter> dram);

  int index() const override { return index_; }
  std::string name() const override { return name_; }
  Result<uint64_t> package_energy_uj() override;
  bool has_dram() const override { return dram_.has_value(); }
  Result<uint64_t> dram_energy_uj() override;
  uint64_t package_counter_start_uj() const override { return package_.start_raw_uj(); }
  uint64_t dram_counter_start_uj() const override { return dram_ ? dram_->start_raw_uj() : 0; }

 private:
  int index_;
  std::string name_;
  std::mutex mutex_;
  RaplZoneCounter package_;              // guarded by mutex_
  std::optional<RaplZoneCounter> dram_;  // guarded by mutex_
};

// The N of a top-level zone directory "intel-rapl:N" (parent empty) or the M of a sub-zone
// "intel-rapl:<parent>:M"; nullopt for any other name.
std::optional<int> rapl_zone_number(const std::string& entry, const std::string& parent);

// Opens every package zone under `powercap_root` (normally /sys/class/powercap), in index order.
// NotFound when there is none; PermissionDenied when an energy_uj cannot be read.
Result<std::vector<std::unique_ptr<Cpu>>> open_rapl_cpus(const std::string& powercap_root);

}  // namespace zeus
