#include "zeusd/lease_recovery.h"

namespace zeus::zeusd {

RecoveryPlan plan_recovery(const JournalContents& journal, const std::string& boot_id,
                           const StartTicksLookup& start_ticks_of) {
  RecoveryPlan plan;
  const bool rebooted = !journal.boot_id.empty() && !boot_id.empty() && journal.boot_id != boot_id;
  for (const Lease& lease : journal.leases) {
    const std::string holder = lease.holder();
    if (!lease.session.empty()) {
      // Sessions live in zeusd's memory: the previous zeusd's ended with it.
      plan.restore.push_back({lease, holder + " ended when the previous zeusd stopped"});
      continue;
    }
    if (rebooted) {
      plan.restore.push_back({lease, holder + " ran before the machine rebooted"});
      continue;
    }
    const std::optional<uint64_t> ticks = start_ticks_of(lease.pid);
    if (!ticks) {
      plan.restore.push_back({lease, holder + " exited while zeusd was down"});
    } else if (lease.pid_start_ticks != 0 && *ticks != lease.pid_start_ticks) {
      plan.restore.push_back(
          {lease, holder +
                      " exited while zeusd was down (its pid now belongs to a process "
                      "started at tick " +
                      std::to_string(*ticks) + ", not " + std::to_string(lease.pid_start_ticks) +
                      ")"});
    } else {
      plan.adopt.push_back(lease);
    }
  }
  return plan;
}

}  // namespace zeus::zeusd
