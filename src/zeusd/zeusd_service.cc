#include "zeusd/zeusd_service.h"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zeus/common/log.h"
#include "zeusd/json_answer.h"

namespace zeus::zeusd {
namespace {

using nlohmann::json;

template <typename T>
json nullable(const Result<T>& value) {
  return value ? json(*value) : json(nullptr);
}

}  // namespace

ZeusdService::ZeusdService(Devices& devices, AllowList allow, ProcessWatcher& watcher,
                           LeaseJournal* journal, UpstreamOptions upstream,
                           AccessPolicy access, double lease_session_timeout_s)
    : devices_(devices),
      allow_(std::move(allow)),
      watcher_(watcher),
      journal_(journal),
      gpu_locks_(devices_.gpus.size()),
      upstream_(
          devices_, mutex_, gpu_locks_,
          [this](const Peer& peer, int index, const GpuCommand& command) {
            return change_gpu(peer, index, command);
          },
          upstream),
      access_(std::move(access)),
      upstream_changes_(upstream.changes),
      sessions_(lease_session_timeout_s),
      routes_(route_table()),
      streams_(devices_, allow_, mutex_, upstream) {}

bool ZeusdService::stream(const HttpRequest& request, const Peer& caller,
                          const std::shared_ptr<http::Reply>& reply) {
  if (!PowerStreamRoutes::owns(request)) return false;
  // The same gate as every other route: API groups, then bearer tokens.
  GateDecision gate = check_access(request, access_, static_cast<int64_t>(std::time(nullptr)));
  if (gate.refusal) {
    reply->send(std::move(*gate.refusal));
    return true;
  }
  Peer peer = caller;
  peer.token = std::move(gate.token);
  streams_.handle(request, peer, reply);
  return true;
}

HttpResponse ZeusdService::discover(const Peer& peer) {
  ServiceLock lock(mutex_);
  json gpus = json::array();
  for (size_t i = 0; i < devices_.gpus.size(); ++i) {
    Gpu& gpu = *devices_.gpus[i];
    auto pci = gpu.pci_address();
    json entry{{"index", i},
               {"id", i},
               {"name", gpu.name()},
               {"pci_address", pci ? json(*pci) : json(nullptr)},
               {"cumulative_energy_available", gpu.has_energy_counter()},
               {"uuid", gpu.uuid()},
               {"architecture", architecture_name(gpu.architecture())},
               {"has_energy_counter", gpu.has_energy_counter()},
               {"default_power_limit_mw", nullable(gpu.default_power_limit_mw())},
               {"supported_sm_clocks_mhz", nullable(gpu.supported_sm_clocks_mhz())},
               {"supported_memory_clocks_mhz", nullable(gpu.supported_memory_clocks_mhz())}};
    auto range = gpu.power_limit_range_mw();
    entry["power_limit_range_mw"] =
        range ? json{{"min", range->min_mw}, {"max", range->max_mw}} : json(nullptr);
    gpus.push_back(std::move(entry));
  }
  json cpus = json::array();
  for (size_t i = 0; i < devices_.cpus.size(); ++i) {
    Cpu& cpu = *devices_.cpus[i];
    cpus.push_back({{"index", i},
                    {"id", i},
                    {"dram_available", cpu.has_dram()},
                    {"package", cpu.index()},
                    {"name", cpu.name()},
                    {"has_dram", cpu.has_dram()}});
  }
  json rights = json::array();
  for (int c = 0; c < kCapabilityCount; ++c) {
    const auto capability = static_cast<Capability>(c);
    if (allow_.refusal(capability, peer).empty()) {
      rights.push_back(std::string(capability_name(capability)));
    }
  }
  // Upstream's fields: the API groups served (--enable) and whether tokens are needed; within
  // them the allow-list decides per caller on the Unix socket ("caller" says what it allows).
  return json_answer(
      200, json{{"gpus", gpus},
                {"cpus", cpus},
                {"enabled_api_groups", access_.enabled_names()},
                {"auth_required", access_.auth_required()},
                {"caller", {{"uid", peer.uid}, {"pid", peer.pid}, {"capabilities", rights}}}});
}

HttpResponse ZeusdService::list_leases() {
  ServiceLock lock(mutex_);
  json list = json::array();
  for (const Lease& lease : leases_.list()) {
    json entry = lease_to_json(lease);
    // A session's id lets its holder act on it: list only a prefix.
    if (!lease.session.empty()) entry["session"] = lease.session.substr(0, 8) + "...";
    list.push_back(std::move(entry));
  }
  json sessions = json::array();
  for (const LeaseSession& session : sessions_.list()) {
    sessions.push_back({{"session", session.id.substr(0, 8) + "..."},
                        {"subject", session.subject},
                        {"silent_s", static_cast<double>(monotonic_ms() - session.last_seen_ms) /
                                         1000.0}});
  }
  return json_answer(200, json{{"leases", list},
                               {"persistent", persistent_.to_json()},
                               {"sessions", sessions},
                               {"session_timeout_s", sessions_.timeout_s()}});
}

void ZeusdService::restore(const Lease& lease, const std::string& why) {
  Gpu& gpu = *devices_.gpus[lease.gpu];
  const std::string what = "GPU " + std::to_string(lease.gpu);
  auto report = [&](const Result<void>& result, const std::string& action) {
    if (result) {
      log_info("zeusd: " + why + ": " + action + " on " + what);
    } else {
      log_error("zeusd: " + why + ": could not " + action + " on " + what + ": " +
                result.error().message);
    }
  };
  if (lease.saved.power_limit_mw) {
    report(gpu.set_power_limit_mw(*lease.saved.power_limit_mw),
           "restore power limit " + std::to_string(*lease.saved.power_limit_mw) + " mW");
  }
  if (lease.saved.sm_clocks_locked) report(gpu.reset_sm_clocks(), "unlock SM clocks");
  if (lease.saved.memory_clocks_locked) report(gpu.reset_memory_clocks(), "unlock memory clocks");
  if (lease.saved.persistence_mode) {
    report(
        gpu.set_persistence_mode(*lease.saved.persistence_mode),
        std::string("restore persistence mode ") + (*lease.saved.persistence_mode ? "on" : "off"));
  }
}

void ZeusdService::on_process_exit(int pid) {
  const auto gpus_held = gpu_locks_.lock_all();
  ServiceLock lock(mutex_);
  for (const Lease& lease : leases_.release_all_of(pid)) {
    restore(lease,
            "pid " + std::to_string(pid) + " (uid " + std::to_string(lease.uid) + ") exited");
  }
  record_leases_or_log();
}

void ZeusdService::restore_all() {
  const auto gpus_held = gpu_locks_.lock_all();
  ServiceLock lock(mutex_);
  for (const Lease& lease : leases_.release_all()) restore(lease, "zeusd is stopping");
  record_leases_or_log();
}

Result<void> ZeusdService::record_leases() {
  if (journal_ == nullptr) return ok();
  return journal_->write(leases_.list());
}

void ZeusdService::record_leases_or_log() {
  if (auto recorded = record_leases(); !recorded) {
    log_error("zeusd: " + recorded.error().message +
              " (a zeusd restarted now may restore settings again; that is harmless)");
  }
}

std::vector<Lease> ZeusdService::leases() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return leases_.list();
}

}  // namespace zeus::zeusd
