// ZeusdService's one change path (declared in zeusd_service.h): validation against the device,
// the caller's lease (or a persistent record), the journal, the change. Every write route calls
// it. change_gpu() visits the command once; below, each kind of command's own steps.
#include "zeusd/gpu_change.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "zeus/common/log.h"
#include "zeusd/zeusd_service.h"

namespace zeus::zeusd {
namespace {

using Failure = tl::unexpected<ChangeError>;

Failure device_failure(const Error& error, const std::string& about) {
  return Failure(classify_device_error(error, about));
}
ChangeError bad_value(std::string message) {
  return ChangeError{400, ErrorCode::kInvalidArgument, std::move(message)};
}

// ---- The knob each command changes ----

GpuKnob command_knob(const SetPowerLimit&) { return GpuKnob::kPowerLimit; }
GpuKnob command_knob(const ResetPowerLimit&) { return GpuKnob::kPowerLimit; }
GpuKnob command_knob(const SetPersistenceMode&) { return GpuKnob::kPersistenceMode; }
GpuKnob command_knob(const LockGpuClocks&) { return GpuKnob::kSmClocks; }
GpuKnob command_knob(const ResetGpuClocks&) { return GpuKnob::kSmClocks; }
GpuKnob command_knob(const LockMemoryClocks&) { return GpuKnob::kMemoryClocks; }
GpuKnob command_knob(const ResetMemoryClocks&) { return GpuKnob::kMemoryClocks; }

// ---- What the device's constraints say against a command's values (before anything else) ----

std::optional<ChangeError> command_refusal(Gpu& gpu, const std::string& what,
                                           const SetPowerLimit& command) {
  auto range = gpu.power_limit_range_mw();
  if (!range) return classify_device_error(range.error(), what + " power limit range");
  const uint32_t mw = command.power_limit_mw;
  if (mw < range->min_mw || mw > range->max_mw) {
    return bad_value("power limit " + std::to_string(mw) + " mW is outside " + what + "'s range " +
                     std::to_string(range->min_mw) + "-" + std::to_string(range->max_mw) + " mW");
  }
  return std::nullopt;
}

std::optional<ChangeError> clock_refusal(const std::string& what, uint32_t min_mhz,
                                         uint32_t max_mhz,
                                         const Result<std::vector<uint32_t>>& supported) {
  if (min_mhz > max_mhz) {
    return bad_value("the lowest clock (" + std::to_string(min_mhz) +
                     " MHz) must not exceed the highest (" + std::to_string(max_mhz) + " MHz)");
  }
  if (supported && !supported->empty()) {
    const auto [lo, hi] = std::minmax_element(supported->begin(), supported->end());
    if (min_mhz < *lo || max_mhz > *hi) {
      return bad_value("clocks " + std::to_string(min_mhz) + "-" + std::to_string(max_mhz) +
                       " MHz are outside " + what + "'s supported " + std::to_string(*lo) + "-" +
                       std::to_string(*hi) + " MHz");
    }
  }
  return std::nullopt;
}
std::optional<ChangeError> command_refusal(Gpu& gpu, const std::string& what,
                                           const LockGpuClocks& command) {
  return clock_refusal(what, command.min_mhz, command.max_mhz, gpu.supported_sm_clocks_mhz());
}
std::optional<ChangeError> command_refusal(Gpu& gpu, const std::string& what,
                                           const LockMemoryClocks& command) {
  return clock_refusal(what, command.min_mhz, command.max_mhz, gpu.supported_memory_clocks_mhz());
}
// Resets and persistence mode take any GPU.
template <typename Command>
std::optional<ChangeError> command_refusal(Gpu&, const std::string&, const Command&) {
  return std::nullopt;
}

// ---- The power limit before a command (0 for other knobs), for its description ----

tl::expected<uint32_t, ChangeError> read_power_limit(Gpu& gpu, const std::string& what) {
  auto before = gpu.power_limit_mw();
  if (!before) return device_failure(before.error(), what + " power limit");
  return *before;
}
tl::expected<uint32_t, ChangeError> power_limit_before(Gpu& gpu, const std::string& what,
                                                       const SetPowerLimit&) {
  return read_power_limit(gpu, what);
}
tl::expected<uint32_t, ChangeError> power_limit_before(Gpu& gpu, const std::string& what,
                                                       const ResetPowerLimit&) {
  return read_power_limit(gpu, what);
}
template <typename Command>
tl::expected<uint32_t, ChangeError> power_limit_before(Gpu&, const std::string&, const Command&) {
  return 0u;
}

// ---- What a lease saves before a command: the knob's value, on its first change only ----

tl::expected<uint32_t, ChangeError> save_power_limit(Gpu& gpu, const std::string& what,
                                                     SavedGpuState& saved) {
  auto before_mw = read_power_limit(gpu, what);
  if (before_mw && !saved.power_limit_mw) saved.power_limit_mw = *before_mw;
  return before_mw;
}
tl::expected<uint32_t, ChangeError> save_before_change(Gpu& gpu, const std::string& what,
                                                       SavedGpuState& saved, const SetPowerLimit&) {
  return save_power_limit(gpu, what, saved);
}
tl::expected<uint32_t, ChangeError> save_before_change(Gpu& gpu, const std::string& what,
                                                       SavedGpuState& saved,
                                                       const ResetPowerLimit&) {
  return save_power_limit(gpu, what, saved);
}
tl::expected<uint32_t, ChangeError> save_before_change(Gpu& gpu, const std::string&,
                                                       SavedGpuState& saved,
                                                       const SetPersistenceMode&) {
  auto before = gpu.persistence_mode();
  if (before && !saved.persistence_mode) saved.persistence_mode = *before;
  return 0u;
}
// NVML cannot read a clock lock back: a lease restores clocks by unlocking them. The flag of
// each clock command's kind:
bool SavedGpuState::*clocks_flag(const LockGpuClocks&) { return &SavedGpuState::sm_clocks_locked; }
bool SavedGpuState::*clocks_flag(const ResetGpuClocks&) { return &SavedGpuState::sm_clocks_locked; }
bool SavedGpuState::*clocks_flag(const LockMemoryClocks&) {
  return &SavedGpuState::memory_clocks_locked;
}
bool SavedGpuState::*clocks_flag(const ResetMemoryClocks&) {
  return &SavedGpuState::memory_clocks_locked;
}
// The clock commands.
template <typename Command>
tl::expected<uint32_t, ChangeError> save_before_change(Gpu&, const std::string&,
                                                       SavedGpuState& saved,
                                                       const Command& command) {
  saved.*clocks_flag(command) = true;
  return 0u;
}

// ---- The device call and what it did ----

struct AppliedChange {
  Result<void> result;
  std::string description;
};

AppliedChange apply_command(Gpu& gpu, const SetPowerLimit& c, uint32_t before_mw) {
  const std::string mw = std::to_string(c.power_limit_mw);
  return {gpu.set_power_limit_mw(c.power_limit_mw),
          "set power limit " + std::to_string(before_mw) + " -> " + mw + " mW"};
}
AppliedChange apply_command(Gpu& gpu, const ResetPowerLimit&, uint32_t before_mw) {
  return {gpu.reset_power_limit(), "reset power limit (was " + std::to_string(before_mw) + " mW)"};
}
AppliedChange apply_command(Gpu& gpu, const SetPersistenceMode& c, uint32_t) {
  return {gpu.set_persistence_mode(c.enabled),
          std::string("set persistence mode ") + (c.enabled ? "on" : "off")};
}
std::string locked(const char* name, uint32_t min_mhz, uint32_t max_mhz) {
  return std::string("locked ") + name + " clocks to " + std::to_string(min_mhz) + "-" +
         std::to_string(max_mhz) + " MHz";
}
AppliedChange apply_command(Gpu& gpu, const LockGpuClocks& c, uint32_t) {
  return {gpu.lock_sm_clocks_mhz(c.min_mhz, c.max_mhz), locked("SM", c.min_mhz, c.max_mhz)};
}
AppliedChange apply_command(Gpu& gpu, const ResetGpuClocks&, uint32_t) {
  return {gpu.reset_sm_clocks(), "unlocked SM clocks"};
}
AppliedChange apply_command(Gpu& gpu, const LockMemoryClocks& c, uint32_t) {
  return {gpu.lock_memory_clocks_mhz(c.min_mhz, c.max_mhz), locked("memory", c.min_mhz, c.max_mhz)};
}
AppliedChange apply_command(Gpu& gpu, const ResetMemoryClocks&, uint32_t) {
  return {gpu.reset_memory_clocks(), "unlocked memory clocks"};
}

// ---- Whether a persistent change leaves nothing to list (the knob is back at its default) ----

// A power limit set back where it was (the default, or the limit before the first persistent
// change): upstream has no reset route for the limit, so a job epilog "resets" by setting the
// default, and that ends the entry as reset_power_limit does.
bool back_to_default(Gpu& gpu, std::optional<uint32_t> original_mw, uint32_t before_mw,
                     const SetPowerLimit& c) {
  const auto default_mw = gpu.default_power_limit_mw();
  return c.power_limit_mw == original_mw.value_or(before_mw) ||
         (default_mw && c.power_limit_mw == *default_mw);
}
bool back_to_default(Gpu&, std::optional<uint32_t>, uint32_t, const SetPersistenceMode&) {
  return false;
}
bool back_to_default(Gpu&, std::optional<uint32_t>, uint32_t, const LockGpuClocks&) {
  return false;
}
bool back_to_default(Gpu&, std::optional<uint32_t>, uint32_t, const LockMemoryClocks&) {
  return false;
}
// The resets.
template <typename Command>
bool back_to_default(Gpu&, std::optional<uint32_t>, uint32_t, const Command&) {
  return true;
}

}  // namespace

GpuKnob knob_of(const GpuCommand& command) {
  return std::visit([](const auto& c) { return command_knob(c); }, command);
}

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

tl::expected<ChangeDone, ChangeError> ZeusdService::change_gpu(const Peer& peer, int index,
                                                               const GpuCommand& command) {
  return std::visit([&](const auto& typed) { return change_gpu_as(peer, index, typed); }, command);
}

template <typename Command>
tl::expected<ChangeDone, ChangeError> ZeusdService::change_gpu_as(const Peer& peer, int index,
                                                                  const Command& command) {
  Gpu& gpu = *devices_.gpus[index];
  const std::string what = "GPU " + std::to_string(index);
  auto refuse = [](int status, std::string message) {
    return Failure(ChangeError{status, ErrorCode::kInvalidArgument, std::move(message)});
  };
  // Validate against the device's constraints before touching anything.
  if (auto refused = command_refusal(gpu, what, command)) return Failure(std::move(*refused));

  // A caller over TCP (with a token) has no process to follow: its change persists.
  // One in a lease session (lease_session.h) leases like a local process.
  // So does one through upstream's routes under --upstream-changes persist (or on request).
  if ((!peer.unix_socket && peer.lease_session.empty()) || peer.persist_change)
    return change_gpu_persistent(peer, index, command);
  const bool session = !peer.lease_session.empty();
  // The lease: one live process or session per GPU; its first change of each knob saves the old
  // value.
  Lease* held = leases_.find(index);
  if (held && !held->held_by(peer.pid, peer.lease_session)) {
    return refuse(409, what + " is leased by " + held->holder() + " until " +
                           (held->session.empty() ? "that process exits" : "that session ends"));
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
  auto before_mw = save_before_change(gpu, what, lease.saved, command);
  if (!before_mw) {
    undo_lease();
    return Failure(std::move(before_mw.error()));
  }
  // 2. On disk before the GPU changes, so that a zeusd killed now still restores it.
  if (auto recorded = record_leases(); !recorded) {
    undo_lease();
    log_error("zeusd: " + who + ": " + what + " not changed: " + recorded.error().message);
    return Failure(ChangeError{500, ErrorCode::kInternal,
                               what + " was not changed: " + recorded.error().message});
  }
  // 3. The change.
  auto [applied, description] = apply_command(gpu, command, *before_mw);
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

// change_gpu() for a caller over TCP, or through upstream's routes under --upstream-changes: no
// lease, the change persists; persistent_ lists it (persistent_change.h).
template <typename Command>
tl::expected<ChangeDone, ChangeError> ZeusdService::change_gpu_persistent(const Peer& peer,
                                                                          int index,
                                                                          const Command& command) {
  Gpu& gpu = *devices_.gpus[index];
  const std::string what = "GPU " + std::to_string(index);
  if (const Lease* held = leases_.find(index)) {
    return Failure(
        ChangeError{409, ErrorCode::kInvalidArgument,
                    what + " is leased by " + held->holder() + " until " +
                        (held->session.empty() ? "that process exits" : "that session ends")});
  }
  auto before_mw = power_limit_before(gpu, what, command);
  if (!before_mw) return Failure(std::move(before_mw.error()));
  const std::string who = peer.description();
  auto [applied, description] = apply_command(gpu, command, *before_mw);
  if (!applied) {
    log_warning("zeusd: " + who + " failed to change " + what + ": " + applied.error().message);
    return device_failure(applied.error(), what);
  }
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const bool back =
      back_to_default(gpu, persistent_.original_power_limit_mw(index), *before_mw, command);
  persistent_.record({index, gpu.uuid(), command_knob(command),
                      peer.token ? peer.token->subject : "", description, now, *before_mw},
                     back);
  log_info("zeusd: " + who + " " + description + " on " + what +
           (peer.unix_socket ? " (--upstream-changes: kept until reset, not restored when the "
                               "caller exits)"
                             : " (over TCP: not restored when the caller goes away)"));
  return ChangeDone{description};
}

}  // namespace zeus::zeusd
