// Changes made over TCP: a remote caller has no process zeusd could follow, so its change is not
// leased and persists as upstream zeusd's do (no restore when the caller goes away, none at a
// zeusd stop). zeusd still keeps a record per GPU and knob — who (the token's subject), what and
// when — listed by GET /leases under "persistent", and drops it when the same knob is reset to its
// default (reset_power_limit, reset_gpu_locked_clocks, ...), or when the power limit is set back
// to its default or to the value it had before the first persistent change (a job epilog's "set
// 700000" ends the entry as reset_power_limit does). A GPU leased by a live local process is
// refused (409) as for anyone else. Changes through upstream's routes on the Unix socket persist
// the same way under `zeusd serve --upstream-changes persist` (or on request).
// Pure bookkeeping; ZeusdService::change_gpu_persistent (gpu_change.cc) does the device call.
// Thread-safety: none; the service's mutex guards it.
//
//   zeus::zeusd::PersistentChanges changes;
//   changes.record({0, "GPU-...", GpuKnob::kPowerLimit, "alice", "set power limit ...", now});
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "zeusd/gpu_change.h"

namespace zeus::zeusd {

struct PersistentChange {
  int gpu = 0;
  std::string gpu_uuid;
  GpuKnob knob = GpuKnob::kPowerLimit;
  std::string subject;  // the token's `sub`
  std::string description;
  int64_t since_unix_s = 0;
  // The power limit: the limit before the first change the entry records (kept by later ones).
  uint32_t original_mw = 0;
};

class PersistentChanges {
 public:
  // Keeps `change` as the latest of its GPU and knob (with the original_mw of the entry it
  // replaces); a reset of the power limit or of a clock lock (`back_to_default`) forgets the knob
  // instead.
  void record(PersistentChange change, bool back_to_default);
  // The power limit GPU `gpu` had before its recorded persistent change; nullopt when none is.
  std::optional<uint32_t> original_power_limit_mw(int gpu) const;
  // In GPU, then knob order: {"gpu", "gpu_uuid", "knob", "subject", "changed", "since_unix_s"}.
  nlohmann::json to_json() const;
  size_t size() const { return changes_.size(); }

 private:
  std::map<std::pair<int, int>, PersistentChange> changes_;  // by (GPU, knob)
};

// "power_limit", "persistence_mode", "sm_clocks", "memory_clocks".
const char* knob_name(GpuKnob knob);

}  // namespace zeus::zeusd
