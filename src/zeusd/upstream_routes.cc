#include "zeusd/upstream_routes.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "zeus/clock.h"
#include "zeus/log.h"
#include "zeusd/json_answer.h"

namespace zeus::zeusd {
namespace {

using http::HttpRequest;
using http::HttpResponse;
using nlohmann::json;

// One route of upstream's table: its method, the allow-list capability and its query.
struct Route {
  const char* path;
  const char* method;
  Capability capability;
  QuerySpec query;
};

const std::vector<Route>& routes() {
  static const std::vector<Route> table = [] {
    const QuerySpec gpu_read{"GPU", false, false, {}, {}};
    auto write = [](std::vector<std::string> numbers, std::vector<std::string> flags) {
      return QuerySpec{"GPU", true, true, std::move(numbers), std::move(flags)};
    };
    const Capability read = Capability::kGpuRead, control = Capability::kGpuControl;
    return std::vector<Route>{
        {"/gpu/get_power_limit", "GET", read, gpu_read},
        {"/gpu/get_power_limit_constraints", "GET", read, gpu_read},
        {"/gpu/get_persistence_mode", "GET", read, gpu_read},
        {"/gpu/get_cumulative_energy", "GET", read, gpu_read},
        {"/gpu/get_power", "GET", read, gpu_read},
        {"/gpu/set_power_limit", "POST", control, write({"power_limit_mw"}, {})},
        {"/gpu/set_persistence_mode", "POST", control, write({}, {"enabled"})},
        {"/gpu/set_gpu_locked_clocks", "POST", control,
         write({"min_clock_mhz", "max_clock_mhz"}, {})},
        {"/gpu/set_mem_locked_clocks", "POST", control,
         write({"min_clock_mhz", "max_clock_mhz"}, {})},
        {"/gpu/reset_gpu_locked_clocks", "POST", control, write({}, {})},
        {"/gpu/reset_mem_locked_clocks", "POST", control, write({}, {})},
        {"/gpu/reset_locked_clocks", "POST", control, write({}, {})},
        {"/cpu/get_cumulative_energy", "GET", Capability::kCpuRead,
         QuerySpec{"CPU", false, false, {}, {"cpu", "dram"}}},
        {"/cpu/get_power", "GET", Capability::kCpuRead, QuerySpec{"CPU", false, false, {}, {}}},
    };
  }();
  return table;
}

HttpResponse upstream_error_json(int status, const std::string& message) {
  return json_answer(status, json{{"error", message}});
}

// 200 with an empty body (a write), or 404 with one (no such route).
HttpResponse empty(int status) {
  HttpResponse response;
  response.status = status;
  response.content_type.clear();
  return response;
}


// Per-device failures with the worst status.
HttpResponse aggregate(const std::map<int, ChangeError>& errors) {
  int worst = 0;
  json messages = json::object(), codes = json::object();
  for (const auto& [id, error] : errors) {
    worst = std::max(worst, UpstreamRoutes::status_of(error));
    messages[std::to_string(id)] = error.message;
    // Our addition, ignored by upstream's client: the project's error code of each failure, so
    // our client keeps telling "not supported" from "invalid" (both 400 upstream).
    codes[std::to_string(id)] =
        error.status == 409 ? "leased" : std::string(error_code_name(error.code));
  }
  return json_answer(worst, json{{"errors", messages}, {"codes", codes}});
}

ChangeError read_failure(const Error& error, const std::string& what) {
  return ChangeError{0, error.code, what + ": " + error.message};
}

// The changes one write route makes on one GPU (reset_locked_clocks: two).
std::vector<GpuChange> changes_of(const std::string& op, const ParsedQuery& query) {
  auto number = [&](const char* name) { return query.numbers.at(name); };
  if (op == "set_power_limit") {
    return {{GpuKnob::kPowerLimit, false, number("power_limit_mw"), 0, false}};
  }
  if (op == "set_persistence_mode") {
    return {{GpuKnob::kPersistenceMode, false, 0, 0, query.flags.at("enabled")}};
  }
  if (op == "set_gpu_locked_clocks" || op == "set_mem_locked_clocks") {
    const GpuKnob knob =
        op == "set_gpu_locked_clocks" ? GpuKnob::kSmClocks : GpuKnob::kMemoryClocks;
    return {{knob, false, number("min_clock_mhz"), number("max_clock_mhz"), false}};
  }
  const GpuChange sm{GpuKnob::kSmClocks, true, 0, 0, false};
  const GpuChange memory{GpuKnob::kMemoryClocks, true, 0, 0, false};
  if (op == "reset_gpu_locked_clocks") return {sm};
  if (op == "reset_mem_locked_clocks") return {memory};
  return {sm, memory};  // reset_locked_clocks
}

}  // namespace

UpstreamRoutes::UpstreamRoutes(Devices& devices, const AllowList& allow, std::mutex& device_mutex,
                               GpuLocks& gpu_locks, ChangeGpu change_gpu, UpstreamOptions options)
    : devices_(devices),
      allow_(allow),
      device_mutex_(device_mutex),
      gpu_locks_(gpu_locks),
      change_gpu_(std::move(change_gpu)),
      options_(options) {}

bool UpstreamRoutes::owns(const std::string& path) {
  if (path == "/time" || path.rfind("/auth/", 0) == 0) return true;
  for (const char* prefix : {"/gpu/", "/cpu/"}) {
    if (path.rfind(prefix, 0) == 0 && path.find('/', 5) == std::string::npos) return true;
  }
  return false;
}

int UpstreamRoutes::status_of(const ChangeError& error) {
  if (error.status == 409) return 409;  // leased by another live process (our addition)
  switch (error.code) {
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kNotSupported:
      return 400;
    default:
      return 500;
  }
}

HttpResponse UpstreamRoutes::handle(const HttpRequest& request, const Peer& peer) {
  if (request.path == "/time") {
    if (request.method != "GET") return empty(404);
    return json_answer(200, json{{"timestamp_ms", unix_time_ms()}});
  }
  if (request.path.rfind("/auth/", 0) == 0 && !peer.token) {
    // Only with a signing key (whose gate then verified the token); else the allow-list decides.
    return upstream_error_json(404, "Authentication is not enabled on this server.");
  }
  if (request.path == "/auth/whoami" && request.method == "GET") {
    json scopes = json::array();
    for (Capability scope : peer.token->scopes) scopes.push_back(capability_name(scope));
    json answer{{"sub", peer.token->subject}, {"scopes", scopes}};
    if (peer.token->expires_unix_s) answer["exp"] = *peer.token->expires_unix_s;
    return json_answer(200, answer);
  }
  const auto route = std::find_if(routes().begin(), routes().end(), [&](const Route& r) {
    return request.path == r.path && request.method == r.method;
  });
  if (route == routes().end()) return empty(404);
  if (auto refused = allow_.refusal(route->capability, peer); !refused.empty()) {
    return upstream_error_json(403, refused);
  }
  const bool gpu = route->query.device == "GPU";
  auto query =
      parse_query(request.query, route->query, gpu ? devices_.gpus.size() : devices_.cpus.size());
  if (!query) return upstream_error_json(400, query.error().message);
  const std::string op = request.path.substr(5);
  if (!gpu) return op == "get_power" ? cpu_power(query->ids) : cpu_energy(*query);
  if (route->capability == Capability::kGpuControl) return gpu_write(op, *query, peer);
  return gpu_read(op, query->ids);
}

HttpResponse UpstreamRoutes::gpu_read(const std::string& op, const std::vector<int>& ids) {
  std::lock_guard<std::mutex> lock(device_mutex_);
  json answer = json::object();
  std::map<int, ChangeError> errors;
  for (int id : ids) {
    Gpu& gpu = *devices_.gpus[id];
    const std::string what = "GPU " + std::to_string(id);
    const std::string key = std::to_string(id);
    // One device reading: its answer, or its failure.
    auto record = [&](const auto& value, const char* about, auto&& to_json) {
      if (value) {
        answer[key] = to_json(*value);
      } else {
        errors[id] = read_failure(value.error(), what + " " + about);
      }
    };
    if (op == "get_power_limit") {
      record(gpu.power_limit_mw(), "power limit", [](uint32_t mw) {
        return json{{"power_limit_mw", mw}};
      });
    } else if (op == "get_power_limit_constraints") {
      record(gpu.power_limit_range_mw(), "power limit constraints", [](PowerLimitRangeMw range) {
        return json{{"min_power_limit_mw", range.min_mw}, {"max_power_limit_mw", range.max_mw}};
      });
    } else if (op == "get_persistence_mode") {
      record(gpu.persistence_mode(), "persistence mode", [](bool enabled) {
        return json{{"enabled", enabled}};
      });
    } else if (op == "get_cumulative_energy") {
      if (!gpu.has_energy_counter()) {
        errors[id] = ChangeError{400, ErrorCode::kNotSupported,
                                 what +
                                     " has no trustworthy cumulative energy counter "
                                     "(/discover: cumulative_energy_available false)"};
        continue;
      }
      record(gpu.total_energy_mj(), "energy", [](uint64_t mj) { return json{{"energy_mj", mj}}; });
    } else {  // get_power
      record(gpu.instant_power_mw(), "power", [](uint32_t mw) { return json(mw); });
    }
  }
  if (!errors.empty()) return aggregate(errors);
  if (op == "get_power")
    return json_answer(200, json{{"timestamp_ms", unix_time_ms()}, {"power_mw", answer}});
  return json_answer(200, answer);
}

HttpResponse UpstreamRoutes::gpu_write(const std::string& op, const ParsedQuery& query,
                                       const Peer& peer) {
  const std::vector<GpuChange> changes = changes_of(op, query);
  const auto gpus_held = gpu_locks_.lock(query.ids);  // then the table lock (gpu_locks.h)
  ServiceLock lock(device_mutex_);
  std::map<int, ChangeError> errors;
  for (int id : query.ids) {
    for (const GpuChange& change : changes) {
      auto done = change_gpu_(peer, id, change);
      if (!done) {
        errors.emplace(id, done.error());  // the first failure of this GPU
      }
    }
  }
  if (errors.empty()) return empty(200);
  if (!query.block) {
    // Upstream reports only what stops a command from being queued; device errors are logged.
    for (const auto& [id, error] : errors) {
      log_warning("zeusd: " + peer.description() + ": /gpu/" + op + " (block=false) on GPU " +
                  std::to_string(id) + ": " + error.message);
    }
    return empty(200);
  }
  return aggregate(errors);
}

HttpResponse UpstreamRoutes::cpu_energy(const ParsedQuery& query) {
  const bool want_cpu = query.flags.at("cpu"), want_dram = query.flags.at("dram");
  std::lock_guard<std::mutex> lock(device_mutex_);
  json answer = json::object();
  std::map<int, ChangeError> errors;
  for (int id : query.ids) {
    Cpu& cpu = *devices_.cpus[id];
    json entry{{"cpu_energy_uj", nullptr}, {"dram_energy_uj", nullptr}};
    if (want_cpu) {
      auto package = cpu.package_energy_uj();
      if (!package) {
        errors[id] = read_failure(package.error(), "CPU " + std::to_string(id) + " energy");
        continue;
      }
      entry["cpu_energy_uj"] = cpu.package_counter_start_uj() + *package;
    }
    if (want_dram && cpu.has_dram()) {
      auto dram = cpu.dram_energy_uj();
      if (!dram) {
        errors[id] = read_failure(dram.error(), "CPU " + std::to_string(id) + " DRAM energy");
        continue;
      }
      entry["dram_energy_uj"] = cpu.dram_counter_start_uj() + *dram;
    }
    answer[std::to_string(id)] = std::move(entry);
  }
  if (!errors.empty()) return aggregate(errors);
  return json_answer(200, answer);
}

HttpResponse UpstreamRoutes::cpu_power(const std::vector<int>& ids) {
  struct Reading {
    uint64_t package_uj = 0;
    std::optional<uint64_t> dram_uj;
  };
  std::map<int, ChangeError> errors;
  // Both readings of every CPU; the lock is not held while waiting between them.
  auto read_all = [&](std::map<int, Reading>& out) {
    std::lock_guard<std::mutex> lock(device_mutex_);
    for (int id : ids) {
      Cpu& cpu = *devices_.cpus[id];
      auto package = cpu.package_energy_uj();
      if (!package) {
        errors.emplace(id, read_failure(package.error(), "CPU " + std::to_string(id) + " energy"));
        continue;
      }
      Reading reading{*package, std::nullopt};
      if (cpu.has_dram()) {
        auto dram = cpu.dram_energy_uj();
        if (!dram) {
          errors.emplace(id,
                         read_failure(dram.error(), "CPU " + std::to_string(id) + " DRAM energy"));
          continue;
        }
        reading.dram_uj = *dram;
      }
      out[id] = reading;
    }
    return std::chrono::steady_clock::now();
  };
  std::map<int, Reading> first, second;
  const auto start = read_all(first);
  if (!errors.empty()) return aggregate(errors);
  if (!ids.empty())
    std::this_thread::sleep_for(std::chrono::duration<double>(options_.cpu_power_window_s));
  const auto end = read_all(second);
  if (!errors.empty()) return aggregate(errors);
  const double elapsed_us =
      std::max(1.0, std::chrono::duration<double, std::micro>(end - start).count());
  auto milliwatts = [&](uint64_t before, uint64_t after) {
    return static_cast<uint64_t>(static_cast<double>(after >= before ? after - before : 0) *
                                 1000.0 / elapsed_us);
  };
  json power = json::object();
  for (int id : ids) {
    const Reading& a = first.at(id);
    const Reading& b = second.at(id);
    json dram = nullptr;
    if (a.dram_uj && b.dram_uj) dram = milliwatts(*a.dram_uj, *b.dram_uj);
    power[std::to_string(id)] = {{"cpu_mw", milliwatts(a.package_uj, b.package_uj)},
                                 {"dram_mw", dram}};
  }
  return json_answer(200, json{{"timestamp_ms", unix_time_ms()}, {"power_mw", power}});
}

}  // namespace zeus::zeusd
