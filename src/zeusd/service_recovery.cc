// ZeusdService at start: what a previous zeusd left behind. See lease_recovery.h
// for the rules; this file applies them to the devices and logs every decision.
#include <string>

#include "zeus/common/log.h"
#include "zeusd/lease_recovery.h"
#include "zeusd/zeusd_service.h"

namespace zeus::zeusd {

std::optional<int> ZeusdService::gpu_of(const Lease& lease) const {
  if (!lease.gpu_uuid.empty()) {
    for (size_t i = 0; i < devices_.gpus.size(); ++i) {
      if (devices_.gpus[i]->uuid() == lease.gpu_uuid) return static_cast<int>(i);
    }
    return std::nullopt;
  }
  if (lease.gpu >= 0 && static_cast<size_t>(lease.gpu) < devices_.gpus.size()) return lease.gpu;
  return std::nullopt;
}

void ZeusdService::recover() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (journal_ != nullptr) {
    const JournalContents journal = journal_->read();
    if (!journal.problem.empty()) log_error("zeusd: " + journal.problem);
    const RecoveryPlan plan = plan_recovery(journal, current_boot_id(),
                                            [this](int pid) { return watcher_.start_ticks(pid); });
    // Each lease's GPU as it is numbered now; a GPU that is gone cannot be restored.
    auto locate = [&](Lease lease) -> std::optional<Lease> {
      const auto index = gpu_of(lease);
      if (!index) {
        log_error("zeusd: the lease journal names GPU " + std::to_string(lease.gpu) + " (" +
                  (lease.gpu_uuid.empty() ? "no UUID" : lease.gpu_uuid) +
                  "), which this machine no longer has; its settings cannot be restored");
        return std::nullopt;
      }
      lease.gpu = *index;
      return lease;
    };
    std::vector<LeaseToRestore> to_restore = plan.restore;
    for (const Lease& journaled : plan.adopt) {
      auto lease = locate(journaled);
      if (!lease) continue;
      // Watching can still find the holder gone (it exited since the plan): restore it then.
      auto watched = watcher_.watch(lease->pid);
      const auto ticks = watcher_.start_ticks(lease->pid);
      if (!watched || !ticks || (lease->pid_start_ticks != 0 && *ticks != lease->pid_start_ticks)) {
        to_restore.push_back({*lease, "pid " + std::to_string(lease->pid) + " (uid " +
                                          std::to_string(lease->uid) + ") exited"});
        continue;
      }
      if (leases_.find(lease->gpu) != nullptr) {  // a journal naming one GPU twice (by UUID)
        log_error("zeusd: the lease journal holds a second lease on GPU " +
                  std::to_string(lease->gpu) + " (pid " + std::to_string(lease->pid) +
                  "); it is dropped, the first is kept");
        continue;
      }
      leases_.adopt(*lease);
      log_info("zeusd: re-adopted the lease of pid " + std::to_string(lease->pid) + " (uid " +
               std::to_string(lease->uid) + ") on GPU " + std::to_string(lease->gpu) +
               " from the lease journal; restored when that process exits");
    }
    for (const LeaseToRestore& step : to_restore) {
      if (auto lease = locate(step.lease)) restore(*lease, step.why + " (from the lease journal)");
    }
    record_leases_or_log();
  }
  warn_about_unleased_changes();
}

void ZeusdService::warn_about_unleased_changes() {
  for (size_t i = 0; i < devices_.gpus.size(); ++i) {
    if (leases_.find(static_cast<int>(i)) != nullptr) continue;
    Gpu& gpu = *devices_.gpus[i];
    auto limit = gpu.power_limit_mw();
    auto default_limit = gpu.default_power_limit_mw();
    if (!limit || !default_limit || *limit == *default_limit) continue;
    log_warning("zeusd: GPU " + std::to_string(i) + " (" + gpu.uuid() + ") has power limit " +
                std::to_string(*limit) + " mW, not its default " + std::to_string(*default_limit) +
                " mW, and no lease will restore it (set by something other than zeusd, or lost "
                "with a lease journal); if nothing should hold it there, reset it: nvidia-smi -i " +
                std::to_string(gpu.physical_index()) + " -pl " +
                std::to_string(*default_limit / 1000));
  }
  // Locked clocks cannot be read back through NVML, so they are not checked here; the journal
  // records every lock zeusd made.
}

}  // namespace zeus::zeusd
