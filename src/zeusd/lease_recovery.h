// Lease recovery: what a restarted zeusd does with each lease its journal holds.
//
// A lease whose holder is gone is restored now (its settings put back); a lease whose holder
// still runs is re-adopted and watched again, so the holder keeps its settings until it exits.
// The holder is the same process only when its pid is alive *and* has the start time the journal
// recorded, in the same boot: a pid now used by another process, or any pid after a reboot,
// counts as gone. A lease recorded without a start time (0) trusts the pid alone.
// Pure: the live lookups are passed in. Thread-safety: pure function.
//
//   auto plan = zeus::zeusd::plan_recovery(journal.read(), zeus::zeusd::current_boot_id(),
//                                          [](int pid) { return process_start_ticks(pid); });
//   for (const auto& step : plan.restore) { ... restore step.lease, log step.why ... }
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "zeusd/lease_journal.h"
#include "zeusd/lease_table.h"

namespace zeus::zeusd {

// The start time of the live process `pid` (process_start_ticks), nullopt when none runs.
using StartTicksLookup = std::function<std::optional<uint64_t>(int pid)>;

struct LeaseToRestore {
  Lease lease;
  std::string why;  // "pid 4242 (uid 1000) exited while zeusd was down", ...
};

struct RecoveryPlan {
  std::vector<LeaseToRestore> restore;  // the holder is gone: put the settings back
  std::vector<Lease> adopt;             // the holder still runs: keep the lease and watch it
};

// Sorts the journal's leases into those to restore and those to re-adopt.
RecoveryPlan plan_recovery(const JournalContents& journal, const std::string& boot_id,
                           const StartTicksLookup& start_ticks_of);

}  // namespace zeus::zeusd
