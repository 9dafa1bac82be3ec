#include "zeusd/upstream_routes.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "zeus/common/clock.h"
#include "zeus/common/log.h"
#include "zeusd/json_answer.h"

namespace zeus::zeusd {
namespace {

using http::HttpResponse;
using nlohmann::json;

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

// `value` (a device call's Result) as `to_json` makes it, or the failure naming `what`.
template <typename Value, typename ToJson>
GpuReading reading(const Value& value, const std::string& what, ToJson&& to_json) {
  if (!value) return tl::unexpected(read_failure(value.error(), what));
  return to_json(*value);
}

// The power reads' entries are bare numbers, under "power_mw".
json milliwatts_json(uint32_t mw) { return json(mw); }

}  // namespace

GpuReading power_limit_entry(Gpu& gpu, const std::string& what) {
  return reading(gpu.power_limit_mw(), what + " power limit", [](uint32_t mw) {
    return json{{"power_limit_mw", mw}};
  });
}
GpuReading power_limit_range_entry(Gpu& gpu, const std::string& what) {
  return reading(
      gpu.power_limit_range_mw(), what + " power limit constraints", [](PowerLimitRangeMw range) {
        return json{{"min_power_limit_mw", range.min_mw}, {"max_power_limit_mw", range.max_mw}};
      });
}
GpuReading persistence_mode_entry(Gpu& gpu, const std::string& what) {
  return reading(gpu.persistence_mode(), what + " persistence mode", [](bool enabled) {
    return json{{"enabled", enabled}};
  });
}
GpuReading energy_entry(Gpu& gpu, const std::string& what) {
  if (!gpu.has_energy_counter()) {
    return tl::unexpected(ChangeError{400, ErrorCode::kNotSupported,
                                      what + " has no trustworthy cumulative energy counter "
                                             "(/discover: cumulative_energy_available false)"});
  }
  return reading(gpu.total_energy_mj(), what + " energy", [](uint64_t mj) {
    return json{{"energy_mj", mj}};
  });
}
GpuReading power_entry(Gpu& gpu, const std::string& what) {
  return reading(gpu.instant_power_mw(), what + " power", milliwatts_json);
}
GpuReading average_power_entry(Gpu& gpu, const std::string& what) {
  return reading(gpu.average_power_mw(), what + " average power", milliwatts_json);
}

GpuReading state_entry(Gpu& gpu, const std::string& what) {
  // The limit in force is required; each other reading is null where the GPU cannot tell (a
  // controller closing a loop needs the rest even then).
  GpuReading limit = power_limit_entry(gpu, what);
  if (!limit) return limit;
  auto optional = [](const Result<uint32_t>& value) { return value ? json(*value) : json(nullptr); };
  json entry = *limit;
  entry["power_draw_mw"] = optional(gpu.instant_power_mw());
  entry["average_power_mw"] = optional(gpu.average_power_mw());
  entry["sm_clock_mhz"] = optional(gpu.sm_clock_mhz());
  return entry;
}

UpstreamRoutes::UpstreamRoutes(Devices& devices, std::mutex& device_mutex, GpuLocks& gpu_locks,
                               ChangeGpu change_gpu, UpstreamOptions options)
    : devices_(devices),
      device_mutex_(device_mutex),
      gpu_locks_(gpu_locks),
      change_gpu_(std::move(change_gpu)),
      options_(options) {}

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

HttpResponse UpstreamRoutes::time() {
  return json_answer(200, json{{"timestamp_ms", unix_time_ms()}});
}

HttpResponse UpstreamRoutes::whoami(const Peer& peer) {
  json scopes = json::array();
  for (Capability scope : peer.token->scopes) scopes.push_back(capability_name(scope));
  json answer{{"sub", peer.token->subject}, {"scopes", scopes}};
  if (peer.token->expires_unix_s) answer["exp"] = *peer.token->expires_unix_s;
  return json_answer(200, answer);
}

HttpResponse UpstreamRoutes::gpu_read(const std::vector<int>& ids, GpuReader read, bool power_map) {
  std::lock_guard<std::mutex> lock(device_mutex_);
  json answer = json::object();
  std::map<int, ChangeError> errors;
  for (int id : ids) {
    GpuReading entry = read(*devices_.gpus[id], "GPU " + std::to_string(id));
    if (entry) {
      answer[std::to_string(id)] = std::move(*entry);
    } else {
      errors[id] = std::move(entry.error());
    }
  }
  if (!errors.empty()) return aggregate(errors);
  if (power_map)
    return json_answer(200, json{{"timestamp_ms", unix_time_ms()}, {"power_mw", answer}});
  return json_answer(200, answer);
}

HttpResponse UpstreamRoutes::gpu_write(std::string_view route,
                                       const std::vector<GpuCommand>& commands,
                                       const ParsedQuery& query, const Peer& peer) {
  const auto gpus_held = gpu_locks_.lock(query.ids);  // then the table lock (gpu_locks.h)
  ServiceLock lock(device_mutex_);
  std::map<int, ChangeError> errors;
  for (int id : query.ids) {
    for (const GpuCommand& command : commands) {
      auto done = change_gpu_(peer, id, command);
      if (!done) {
        errors.emplace(id, done.error());  // the first failure of this GPU
      }
    }
  }
  if (errors.empty()) return empty_answer(200);
  if (!query.block) {
    // Upstream reports only what stops a command from being queued; device errors are logged.
    for (const auto& [id, error] : errors) {
      log_warning("zeusd: " + peer.description() + ": /gpu/" + std::string(route) +
                  " (block=false) on GPU " + std::to_string(id) + ": " + error.message);
    }
    return empty_answer(200);
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
