// ZeusdService's one change path (declared in zeusd_service.h): validation against the device,
// the caller's lease, the journal, the change. Both route tables call it.
#include "zeusd/gpu_change.h"

#include <algorithm>

#include "zeus/log.h"
#include "zeusd/zeusd_service.h"

namespace zeus::zeusd {

ChangeError classify_device_error(const Error& error, const std::string& what) {
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
      return {400, error.code, what + ": " + error.message};
    case ErrorCode::kNotFound:
      return {404, error.code, what + ": " + error.message};
    case ErrorCode::kNotSupported:
      return {501, error.code, what + ": " + error.message};
    case ErrorCode::kUnavailable:
      return {503, error.code, what + ": " + error.message};
    case ErrorCode::kPermissionDenied:
      return {500, error.code,
              what + ": zeusd itself lacks the privilege (run it as root): " + error.message};
    case ErrorCode::kInternal:
      break;
  }
  return {500, error.code, what + ": " + error.message};
}

AppliedChange apply_gpu_change(Gpu& gpu, const GpuChange& change, uint32_t before_mw) {
  Result<void> applied = ok();
  std::string description;
  const bool reset = change.reset;
  const bool sm = change.knob == GpuKnob::kSmClocks;
  const uint32_t a = change.value_a, b = change.value_b;
  if (change.knob == GpuKnob::kPowerLimit) {
    if (reset) {
      applied = gpu.reset_power_limit();
      description = "reset power limit (was " + std::to_string(before_mw) + " mW)";
    } else {
      applied = gpu.set_power_limit_mw(a);
      description =
          "set power limit " + std::to_string(before_mw) + " -> " + std::to_string(a) + " mW";
    }
  } else if (change.knob == GpuKnob::kPersistenceMode) {
    applied = gpu.set_persistence_mode(change.enabled);
    description = std::string("set persistence mode ") + (change.enabled ? "on" : "off");
  } else {
    const char* name = sm ? "SM" : "memory";
    if (reset) {
      applied = sm ? gpu.reset_sm_clocks() : gpu.reset_memory_clocks();
      description = std::string("unlocked ") + name + " clocks";
    } else {
      applied = sm ? gpu.lock_sm_clocks_mhz(a, b) : gpu.lock_memory_clocks_mhz(a, b);
      description = std::string("locked ") + name + " clocks to " + std::to_string(a) + "-" +
                    std::to_string(b) + " MHz";
    }
  }
  return {std::move(applied), std::move(description)};
}

tl::expected<ChangeDone, ChangeError> ZeusdService::change_gpu(const Peer& peer, int index,
                                                               const GpuChange& change) {
  Gpu& gpu = *devices_.gpus[index];
  const std::string what = "GPU " + std::to_string(index);
  auto refuse = [](int status, std::string message) {
    return tl::unexpected(ChangeError{status, ErrorCode::kInvalidArgument, std::move(message)});
  };
  auto device_failure = [](const Error& error, const std::string& about) {
    return tl::unexpected(classify_device_error(error, about));
  };
  const bool reset = change.reset;
  // Validate against the device's constraints before touching anything.
  if (change.knob == GpuKnob::kPowerLimit && !reset) {
    auto range = gpu.power_limit_range_mw();
    if (!range) return device_failure(range.error(), what + " power limit range");
    if (change.value_a < range->min_mw || change.value_a > range->max_mw) {
      return refuse(400, "power limit " + std::to_string(change.value_a) + " mW is outside " +
                             what + "'s range " + std::to_string(range->min_mw) + "-" +
                             std::to_string(range->max_mw) + " mW");
    }
  } else if ((change.knob == GpuKnob::kSmClocks || change.knob == GpuKnob::kMemoryClocks) &&
             !reset) {
    if (change.value_a > change.value_b) {
      return refuse(400, "the lowest clock (" + std::to_string(change.value_a) +
                             " MHz) must not exceed the highest (" +
                             std::to_string(change.value_b) + " MHz)");
    }
    auto supported = change.knob == GpuKnob::kSmClocks ? gpu.supported_sm_clocks_mhz()
                                                       : gpu.supported_memory_clocks_mhz();
    if (supported && !supported->empty()) {
      const auto [lo, hi] = std::minmax_element(supported->begin(), supported->end());
      if (change.value_a < *lo || change.value_b > *hi) {
        return refuse(400, "clocks " + std::to_string(change.value_a) + "-" +
                               std::to_string(change.value_b) + " MHz are outside " + what +
                               "'s supported " + std::to_string(*lo) + "-" + std::to_string(*hi) +
                               " MHz");
      }
    }
  }

  // A caller over TCP (with a token) has no process to follow: its change persists.
  // One in a lease session (lease_session.h) leases like a local process.
  // So does one through upstream's routes under --upstream-changes persist (or on request).
  if ((!peer.unix_socket && peer.lease_session.empty()) || peer.persist_change)
    return change_gpu_persistent(peer, index, change);
  const bool session = !peer.lease_session.empty();
  // The lease: one live process or session per GPU; its first change of each knob saves the old
  // value.
  Lease* held = leases_.find(index);
  if (held && !held->held_by(peer.pid, peer.lease_session)) {
    return refuse(409, what + " is leased by " + held->holder() + " until " +
                           (held->session.empty() ? "that process exits"
                                                  : "that session ends"));
  }
  const bool new_lease = held == nullptr;
  const std::string who = peer.description();
  if (new_lease && !session) {
    auto watched = watcher_.watch(peer.pid);
    if (!watched)
      return refuse(400, "cannot tie the change to the client: " + watched.error().message);
  }
  Lease& lease = leases_.acquire(index, peer.pid, peer.uid, peer.lease_session);
  const Lease lease_before = lease;
  // Puts the lease table back as it was before this request (the change was not made).
  auto undo_lease = [&] {
    if (new_lease) {
      leases_.erase(index);
    } else {
      *leases_.find(index) = lease_before;
    }
  };
  if (new_lease) {
    if (!session) lease.pid_start_ticks = watcher_.start_ticks(peer.pid).value_or(0);
    lease.gpu_uuid = gpu.uuid();
  }
  // 1. What to put back: the first change of each knob saves the knob's value.
  const bool sm = change.knob == GpuKnob::kSmClocks;
  uint32_t before_mw = 0;
  if (change.knob == GpuKnob::kPowerLimit) {
    auto before = gpu.power_limit_mw();
    if (!before) {
      undo_lease();
      return device_failure(before.error(), what + " power limit");
    }
    before_mw = *before;
    if (!lease.saved.power_limit_mw) lease.saved.power_limit_mw = before_mw;
  } else if (change.knob == GpuKnob::kPersistenceMode) {
    auto before = gpu.persistence_mode();
    if (before && !lease.saved.persistence_mode) lease.saved.persistence_mode = *before;
  } else {
    (sm ? lease.saved.sm_clocks_locked : lease.saved.memory_clocks_locked) = true;
  }
  // 2. On disk before the GPU changes, so that a zeusd killed now still restores it.
  if (auto recorded = record_leases(); !recorded) {
    undo_lease();
    log_error("zeusd: " + who + ": " + what + " not changed: " + recorded.error().message);
    return tl::unexpected(ChangeError{500, ErrorCode::kInternal,
                                      what + " was not changed: " + recorded.error().message});
  }
  // 3. The change.
  auto [applied, description] = apply_gpu_change(gpu, change, before_mw);
  if (!applied) {
    log_warning("zeusd: " + who + " failed to change " + what + ": " + applied.error().message);
    if (new_lease) {
      leases_.erase(index);
      record_leases_or_log();
    }
    return device_failure(applied.error(), what);
  }
  log_info("zeusd: " + who + " " + description + " on " + what + " (restored when " +
           (session ? lease.holder() + " ends)" : "pid " + std::to_string(peer.pid) + " exits)"));
  return ChangeDone{description};
}

}  // namespace zeus::zeusd
