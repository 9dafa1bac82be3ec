#include "zeusd/persistent_change.h"

#include <nlohmann/json.hpp>

#include "zeus/common/log.h"
#include "zeusd/json_answer.h"
#include "zeusd/zeusd_service.h"

namespace zeus::zeusd {

std::string_view upstream_changes_name(UpstreamOptions::Changes changes) {
  switch (changes) {
    case UpstreamOptions::Changes::kLease:
      return "lease";
    case UpstreamOptions::Changes::kPersist:
      return "persist";
    case UpstreamOptions::Changes::kOnRequest:
      return "on-request";
  }
  return "?";
}

std::optional<UpstreamOptions::Changes> parse_upstream_changes(std::string_view name) {
  for (auto changes : {UpstreamOptions::Changes::kLease, UpstreamOptions::Changes::kPersist,
                       UpstreamOptions::Changes::kOnRequest}) {
    if (upstream_changes_name(changes) == name) return changes;
  }
  return std::nullopt;
}

tl::expected<bool, HttpResponse> ZeusdService::upstream_change_persists(
    const HttpRequest& request, const Peer& peer) const {
  const std::string* asked = request.header("x-zeusd-persist");
  auto refuse = [](const std::string& message) {
    return tl::unexpected(json_answer(400, nlohmann::json{{"error", message}}));
  };
  bool wants = false;
  if (asked != nullptr) {
    if (*asked == "1" || *asked == "true") {
      wants = true;
    } else if (*asked != "0" && *asked != "false") {
      return refuse("X-Zeusd-Persist is 1 or 0 (true or false), not '" + asked->substr(0, 32) +
                    "'");
    }
  }
  // Over TCP the lease session decides (change_gpu): this policy is the Unix socket's.
  if (!peer.unix_socket) return false;
  switch (upstream_changes_) {
    case UpstreamOptions::Changes::kPersist:
      return true;
    case UpstreamOptions::Changes::kOnRequest:
      return wants;
    case UpstreamOptions::Changes::kLease:
      break;
  }
  if (wants) {
    return refuse(
        "this zeusd ties every change to the calling process and undoes it when the process "
        "exits (zeusd serve --upstream-changes lease, the default); X-Zeusd-Persist: 1 needs "
        "the operator to start it with --upstream-changes on-request (or persist)");
  }
  return false;
}

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
    return;
  }
  auto it = changes_.find(key);
  if (it != changes_.end()) change.original_mw = it->second.original_mw;
  changes_[key] = std::move(change);
}

std::optional<uint32_t> PersistentChanges::original_power_limit_mw(int gpu) const {
  auto it = changes_.find({gpu, static_cast<int>(GpuKnob::kPowerLimit)});
  if (it == changes_.end()) return std::nullopt;
  return it->second.original_mw;
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

}  // namespace zeus::zeusd
