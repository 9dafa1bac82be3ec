#include "zeusd/power_stream_routes.h"

#include <chrono>
#include <map>

#include <nlohmann/json.hpp>

#include "zeus/common/clock.h"
#include "zeus/common/log.h"
#include "zeusd/json_answer.h"
#include "zeusd/power_samples.h"
#include "zeusd/upstream_query.h"

namespace zeus::zeusd {
namespace {

double steady_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

struct PowerStreamRoutes::PollState {
  GpuChangeFilter gpu_filter;
  std::map<int, CpuPowerMeter> meters;
  std::map<int, CpuPowerMw> last_cpu;
  std::map<std::string, uint64_t> failures;  // per device and what failed: logged once
};

PowerStreamRoutes::PowerStreamRoutes(Devices& devices, const AllowList& allow,
                                     std::mutex& device_mutex, const UpstreamOptions& options)
    : devices_(devices),
      allow_(allow),
      device_mutex_(device_mutex),
      state_(std::make_unique<PollState>()),
      gpu_(std::make_unique<PowerFanout>("GPU", options.gpu_power_poll_hz,
                                         [this](bool restart) { return poll_gpus(restart); })),
      cpu_(std::make_unique<PowerFanout>("CPU", options.cpu_power_poll_hz,
                                         [this](bool restart) { return poll_cpus(restart); })) {}

PowerStreamRoutes::~PowerStreamRoutes() {
  gpu_->stop();  // the pollers use this object's state and devices: end them first
  cpu_->stop();
}

bool PowerStreamRoutes::owns(const http::HttpRequest& request) {
  return request.method == "GET" &&
         (request.path == "/gpu/stream_power" || request.path == "/cpu/stream_power");
}

void PowerStreamRoutes::handle(const http::HttpRequest& request, const Peer& peer,
                               const std::shared_ptr<http::Reply>& reply) {
  const bool gpu = request.path == "/gpu/stream_power";
  const Capability capability = gpu ? Capability::kGpuRead : Capability::kCpuRead;
  if (auto refused = allow_.refusal(capability, peer); !refused.empty()) {
    reply->send(json_answer(403, nlohmann::json{{"error", refused}}));
    return;
  }
  const QuerySpec spec{gpu ? "GPU" : "CPU", false, false, {}, {}};
  auto query = parse_query(request.query, spec, gpu ? devices_.gpus.size() : devices_.cpus.size());
  if (!query) {
    reply->send(json_answer(400, nlohmann::json{{"error", query.error().message}}));
    return;
  }
  std::shared_ptr<http::EventStream> stream = reply->start_events();
  if (!stream) return;  // the client is gone
  PowerFanout& fanout = gpu ? *gpu_ : *cpu_;
  fanout.subscribe(
      std::set<int>(query->ids.begin(), query->ids.end()),
      [stream](std::string_view data) {
        return data.empty() ? stream->comment("keep-alive") : stream->send(data);
      },
      [stream] { return stream->open(); });
}

std::vector<PowerFanout::Event> PowerStreamRoutes::poll_gpus(bool restart) {
  if (restart) state_->gpu_filter.reset();
  std::vector<PowerFanout::Event> events;
  std::lock_guard<std::mutex> lock(device_mutex_);
  const uint64_t now_ms = unix_time_ms();
  for (size_t i = 0; i < devices_.gpus.size(); ++i) {
    const int id = static_cast<int>(i);
    auto mw = devices_.gpus[i]->instant_power_mw();
    if (!mw) {
      // A warning per failure streak, not one per poll.
      if (state_->failures["GPU " + std::to_string(id)]++ == 0) {
        log_warning("zeusd: power stream: GPU " + std::to_string(id) + ": " + mw.error().message);
      }
      continue;
    }
    state_->failures.erase("GPU " + std::to_string(id));
    if (state_->gpu_filter.changed(id, *mw)) {
      events.push_back({id, event_json(GpuPowerSample{now_ms, id, *mw})});
    }
  }
  return events;
}

std::vector<PowerFanout::Event> PowerStreamRoutes::poll_cpus(bool restart) {
  if (restart) {
    state_->meters.clear();
    state_->last_cpu.clear();
  }
  std::vector<PowerFanout::Event> events;
  std::lock_guard<std::mutex> lock(device_mutex_);
  const uint64_t now_ms = unix_time_ms();
  for (size_t i = 0; i < devices_.cpus.size(); ++i) {
    const int id = static_cast<int>(i);
    Cpu& cpu = *devices_.cpus[i];
    const std::string key = "CPU " + std::to_string(id);
    RaplReading reading;
    auto package = cpu.package_energy_uj();
    std::optional<Error> failure;
    if (package) {
      reading.package_uj = *package;
      if (cpu.has_dram()) {
        auto dram = cpu.dram_energy_uj();
        if (dram) {
          reading.dram_uj = *dram;
        } else {
          failure = dram.error();
        }
      }
    } else {
      failure = package.error();
    }
    if (failure) {
      if (state_->failures[key]++ == 0) {
        log_warning("zeusd: power stream: " + key + ": " + failure->message);
      }
      continue;
    }
    state_->failures.erase(key);
    reading.time_s = steady_s();
    auto power = state_->meters[id].update(reading);
    if (!power) continue;  // the baseline
    auto last = state_->last_cpu.find(id);
    if (last != state_->last_cpu.end() && last->second == *power) continue;
    state_->last_cpu[id] = *power;
    events.push_back({id, event_json(CpuPowerSample{now_ms, id, power->cpu_mw, power->dram_mw})});
  }
  return events;
}

}  // namespace zeus::zeusd
