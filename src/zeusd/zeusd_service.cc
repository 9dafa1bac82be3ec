#include "zeusd/zeusd_service.h"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/strict_json.h"
#include "zeus/log.h"
#include "zeusd/json_answer.h"

namespace zeus::zeusd {
namespace {

using nlohmann::json;

HttpResponse error_response(int status, const std::string& message) {
  return json_answer(status, json{{"message", message}});
}

HttpResponse device_error(const Error& error, const std::string& what) {
  const ChangeError classified = classify_device_error(error, what);
  return error_response(classified.status, classified.message);
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> segments;
  size_t start = 1;  // path starts with '/'
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    segments.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return segments;
}

// A decimal index below `count`, or nullopt.
std::optional<int> parse_index(const std::string& text, size_t count) {
  if (text.empty() || text.size() > 6) return std::nullopt;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (static_cast<size_t>(value) >= count) return std::nullopt;
  return value;
}

std::string range_text(size_t count) {
  return count == 0 ? "none" : "0-" + std::to_string(count - 1);
}

std::optional<uint32_t> get_u32(const json& body, const char* key) {
  auto it = body.find(key);
  if (it == body.end() || !it->is_number_unsigned()) return std::nullopt;
  const uint64_t value = it->get<uint64_t>();
  if (value > std::numeric_limits<uint32_t>::max()) return std::nullopt;
  return static_cast<uint32_t>(value);
}

// The methods each GPU knob answers.
struct KnobMethods {
  const char* knob;
  bool get, post, del;
};
constexpr KnobMethods kKnobs[] = {
    {"power_limit", true, true, true}, {"power", true, false, false},
    {"energy", true, false, false},    {"persistence_mode", true, true, false},
    {"sm_clocks", false, true, true},  {"memory_clocks", false, true, true},
};

// The fields of a change's JSON body, and an example body.
struct KnobFields {
  std::span<const char* const> names;
  const char* example = "";
};
constexpr const char* kPowerLimitFields[] = {"power_limit_mw"};
constexpr const char* kPersistenceFields[] = {"enabled"};
constexpr const char* kClockFields[] = {"min_mhz", "max_mhz"};

KnobFields fields_of(const std::string& knob) {
  if (knob == "power_limit") return {kPowerLimitFields, "{\"power_limit_mw\": 300000}"};
  if (knob == "persistence_mode") return {kPersistenceFields, "{\"enabled\": true}"};
  return {kClockFields, "{\"min_mhz\": 1000, \"max_mhz\": 1400}"};
}

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
          devices_, allow_, mutex_, gpu_locks_,
          [this](const Peer& peer, int index, const GpuChange& change) {
            return change_gpu(peer, index, change);
          },
          upstream),
      access_(std::move(access)),
      upstream_changes_(upstream.changes),
      sessions_(lease_session_timeout_s),
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

HttpResponse ZeusdService::handle(const HttpRequest& request, const Peer& caller) {
  // API groups and bearer tokens, before any route (request_gate.h).
  GateDecision gate = check_access(request, access_, static_cast<int64_t>(std::time(nullptr)));
  if (gate.refusal) return std::move(*gate.refusal);
  Peer peer = caller;
  peer.token = std::move(gate.token);
  if (auto refused = attach_session(request, peer)) return std::move(*refused);
  // Upstream's routes lock mutex_ around their device calls themselves (/cpu/get_power waits
  // between two readings without holding it).
  if (UpstreamRoutes::owns(request.path)) {
    auto persist = upstream_change_persists(request, peer);
    if (!persist) return std::move(persist.error());
    peer.persist_change = *persist;
    return upstream_.handle(request, peer);
  }
  const std::vector<std::string> segments = split_path(request.path);
  // The locks of the GPUs this request may change, before the table lock (gpu_locks.h): a GPU
  // route's own; every GPU for a lease session's routes (ending one restores its GPUs).
  std::vector<std::unique_lock<std::mutex>> gpus_held;
  if (request.method != "GET" && request.method != "HEAD" && !segments.empty()) {
    if (segments.size() == 3 && segments[0] == "gpu") {
      if (auto index = parse_index(segments[1], devices_.gpus.size())) {
        gpus_held = gpu_locks_.lock({*index});
      }
    } else if (segments[0] == "lease_session") {
      gpus_held = gpu_locks_.lock_all();
    }
  }
  ServiceLock lock(mutex_);
  if (segments.size() == 1 && (segments[0] == "discover" || segments[0] == "leases")) {
    if (request.method != "GET") return error_response(405, request.path + " answers GET only");
    return segments[0] == "discover" ? discover(peer) : list_leases(peer);
  }
  if (!segments.empty() && segments.size() <= 3 && segments[0] == "lease_session") {
    return session_route(request, peer, segments);
  }
  if (segments.size() == 3 && segments[0] == "gpu") {
    return gpu_route(request, peer, segments[1], segments[2]);
  }
  if (segments.size() == 3 && segments[0] == "cpu" && segments[2] == "energy") {
    return cpu_route(request, peer, segments[1]);
  }
  return error_response(404, "no route " + request.method + " " + request.path +
                                 " (GET /discover lists the devices; routes: /gpu/{i}/<knob>, "
                                 "/cpu/{i}/energy, /leases)");
}

HttpResponse ZeusdService::discover(const Peer& peer) {
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

HttpResponse ZeusdService::list_leases(const Peer& peer) {
  if (auto refused = allow_.refusal(Capability::kGpuRead, peer); !refused.empty()) {
    return error_response(403, refused);
  }
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

HttpResponse ZeusdService::gpu_route(const HttpRequest& request, const Peer& peer,
                                     const std::string& index_text, const std::string& knob) {
  const KnobMethods* methods = nullptr;
  for (const auto& k : kKnobs) {
    if (knob == k.knob) methods = &k;
  }
  if (!methods) {
    return error_response(404, "unknown GPU knob '" + knob +
                                   "' (power_limit, power, energy, persistence_mode, sm_clocks, "
                                   "memory_clocks)");
  }
  const bool is_get = request.method == "GET";
  const bool allowed_method = (is_get && methods->get) ||
                              (request.method == "POST" && methods->post) ||
                              (request.method == "DELETE" && methods->del);
  if (!allowed_method)
    return error_response(405, request.method + " is not a method of /gpu/{i}/" + knob);
  // Over TCP no allow-list entry can grant a change, so that is what a TCP peer is told.
  const Capability capability = is_get ? Capability::kGpuRead : Capability::kGpuControl;
  if (auto refused = allow_.refusal(capability, peer); !refused.empty()) {
    return error_response(403, refused);
  }
  const auto index = parse_index(index_text, devices_.gpus.size());
  if (!index) {
    return error_response(404, "unknown GPU '" + index_text.substr(0, 32) +
                                   "': zeusd manages GPUs " + range_text(devices_.gpus.size()));
  }
  return is_get ? gpu_read(*index, knob) : gpu_change(request, peer, *index, knob);
}

HttpResponse ZeusdService::gpu_read(int index, const std::string& knob) {
  Gpu& gpu = *devices_.gpus[index];
  const std::string what = "GPU " + std::to_string(index);
  if (knob == "power_limit") {
    auto limit = gpu.power_limit_mw();
    if (!limit) return device_error(limit.error(), what + " power limit");
    return json_answer(200, json{{"gpu", index}, {"power_limit_mw", *limit}});
  }
  if (knob == "power") {
    auto instant = gpu.instant_power_mw();
    if (!instant) return device_error(instant.error(), what + " power");
    return json_answer(200, json{{"gpu", index},
                                 {"instant_power_mw", *instant},
                                 {"average_power_mw", nullable(gpu.average_power_mw())}});
  }
  if (knob == "energy") {
    auto energy = gpu.total_energy_mj();
    if (!energy) return device_error(energy.error(), what + " energy");
    return json_answer(200, json{{"gpu", index}, {"total_energy_mj", *energy}});
  }
  auto enabled = gpu.persistence_mode();
  if (!enabled) return device_error(enabled.error(), what + " persistence mode");
  return json_answer(200, json{{"gpu", index}, {"enabled", *enabled}});
}

HttpResponse ZeusdService::gpu_change(const HttpRequest& request, const Peer& peer, int index,
                                      const std::string& knob) {
  const bool reset = request.method == "DELETE";
  // The body: one JSON object of this change's fields, no other and none twice. A reset takes
  // no field (an empty body, or {}).
  json body = json::object();
  if (!reset || !request.body.empty()) {
    const KnobFields fields = reset ? KnobFields{} : fields_of(knob);
    auto parsed = parse_strict_json_object(request.body);
    Result<void> known = parsed ? check_known_fields(*parsed, fields.names) : ok();
    if (!parsed || !known) {
      return error_response(400, request.method + " " + request.path + ": " +
                                     (parsed ? known.error().message : parsed.error().message) +
                                     (fields.example[0] ? std::string(", e.g. ") + fields.example
                                                        : std::string(" (send no body)")));
    }
    body = std::move(*parsed);
  }
  GpuChange change;
  change.reset = reset;
  if (knob == "power_limit") {
    change.knob = GpuKnob::kPowerLimit;
    if (!reset) {
      auto limit = get_u32(body, "power_limit_mw");
      if (!limit) return error_response(400, "power_limit_mw must be a non-negative integer (mW)");
      change.value_a = *limit;
    }
  } else if (knob == "persistence_mode") {
    change.knob = GpuKnob::kPersistenceMode;
    auto it = body.find("enabled");
    if (it == body.end() || !it->is_boolean())
      return error_response(400, "enabled must be true or false");
    change.enabled = it->get<bool>();
  } else {
    change.knob = knob == "sm_clocks" ? GpuKnob::kSmClocks : GpuKnob::kMemoryClocks;
    if (!reset) {
      auto min_mhz = get_u32(body, "min_mhz");
      auto max_mhz = get_u32(body, "max_mhz");
      if (!min_mhz || !max_mhz)
        return error_response(400, "min_mhz and max_mhz must be non-negative integers (MHz)");
      change.value_a = *min_mhz;
      change.value_b = *max_mhz;
    }
  }
  auto done = change_gpu(peer, index, change);
  if (!done) return error_response(done.error().status, done.error().message);
  json answer{{"gpu", index}, {"changed", done->description}};
  if (change.knob == GpuKnob::kPowerLimit) {
    answer["power_limit_mw"] = nullable(devices_.gpus[index]->power_limit_mw());
  }
  return json_answer(200, answer);
}

HttpResponse ZeusdService::cpu_route(const HttpRequest& request, const Peer& peer,
                                     const std::string& index_text) {
  if (request.method != "GET") return error_response(405, "/cpu/{i}/energy answers GET only");
  if (auto refused = allow_.refusal(Capability::kCpuRead, peer); !refused.empty()) {
    return error_response(403, refused);
  }
  const auto index = parse_index(index_text, devices_.cpus.size());
  if (!index) {
    return error_response(404, "unknown CPU '" + index_text.substr(0, 32) +
                                   "': zeusd reads CPU packages " +
                                   range_text(devices_.cpus.size()));
  }
  Cpu& cpu = *devices_.cpus[*index];
  auto package = cpu.package_energy_uj();
  if (!package)
    return device_error(package.error(), "CPU " + std::to_string(*index) + " package energy");
  json dram = nullptr;
  if (cpu.has_dram()) {
    auto value = cpu.dram_energy_uj();
    if (!value)
      return device_error(value.error(), "CPU " + std::to_string(*index) + " DRAM energy");
    dram = *value;
  }
  return json_answer(
      200, json{{"cpu", *index}, {"package_energy_uj", *package}, {"dram_energy_uj", dram}});
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
