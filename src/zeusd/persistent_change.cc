#include "zeusd/persistent_change.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "zeus/log.h"
#include "zeusd/zeusd_service.h"

namespace zeus::zeusd {

const char* knob_name(GpuKnob knob) {
  switch (knob) {
    case GpuKnob::kPowerLimit:
      return "power_limit";
    case GpuKnob::kPersistenceMode:
      return "persistence_mode";
    case GpuKnob::kSmClocks:
      return "sm_clocks";
    case GpuKnob::kMemoryClocks:
      return "memory_clocks";
  }
  return "?";
}

void PersistentChanges::record(PersistentChange change, bool back_to_default) {
  const std::pair<int, int> key{change.gpu, static_cast<int>(change.knob)};
  if (back_to_default) {
    changes_.erase(key);
  } else {
    changes_[key] = std::move(change);
  }
}

nlohmann::json PersistentChanges::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [key, change] : changes_) {
    list.push_back({{"gpu", change.gpu},
                    {"gpu_uuid", change.gpu_uuid},
                    {"knob", knob_name(change.knob)},
                    {"subject", change.subject},
                    {"changed", change.description},
                    {"since_unix_s", change.since_unix_s}});
  }
  return list;
}

tl::expected<ChangeDone, ChangeError> ZeusdService::change_gpu_persistent(
    const Peer& peer, int index, const GpuChange& change) {
  Gpu& gpu = *devices_.gpus[index];
  const std::string what = "GPU " + std::to_string(index);
  if (const Lease* held = leases_.find(index)) {
    return tl::unexpected(ChangeError{
        409, ErrorCode::kInvalidArgument,
        what + " is leased by " + held->holder() + " until " +
            (held->session.empty() ? "that process exits" : "that session ends")});
  }
  uint32_t before_mw = 0;
  if (change.knob == GpuKnob::kPowerLimit) {
    auto before = gpu.power_limit_mw();
    if (!before) return tl::unexpected(classify_device_error(before.error(), what + " power limit"));
    before_mw = *before;
  }
  const std::string who = peer.description();
  auto [applied, description] = apply_gpu_change(gpu, change, before_mw);
  if (!applied) {
    log_warning("zeusd: " + who + " failed to change " + what + ": " + applied.error().message);
    return tl::unexpected(classify_device_error(applied.error(), what));
  }
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  persistent_.record({index, gpu.uuid(), change.knob, peer.token ? peer.token->subject : "",
                      description, now},
                     change.reset);
  log_info("zeusd: " + who + " " + description + " on " + what +
           " (over TCP: not restored when the caller goes away)");
  return ChangeDone{description};
}

}  // namespace zeus::zeusd
