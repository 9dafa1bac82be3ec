#include "power_remote.h"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "zeus/client/power_streaming_client.h"
#include "zeusd_streams.h"

namespace zeus::cli {
namespace {

double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

nlohmann::json node_json(const NodePower& node) {
  nlohmann::json gpus = nlohmann::json::object(), cpus = nlohmann::json::object();
  for (const auto& [id, w] : node.gpu_power_w) gpus[std::to_string(id)] = w;
  for (const auto& [id, p] : node.cpu_power_w) {
    cpus[std::to_string(id)] = {{"cpu_w", p.cpu_w},
                                {"dram_w", p.dram_w ? nlohmann::json(*p.dram_w) : nullptr}};
  }
  nlohmann::json out{{"endpoint", node.endpoint},
                     {"connected", node.connected},
                     {"power_w", node.power_w},
                     {"energy_j", node.energy_j},
                     {"gpu_power_w", gpus},
                     {"cpu_power_w", cpus},
                     {"clock_offset_s", node.clock_offset_s},
                     {"events", node.events},
                     {"reconnects", node.reconnects}};
  if (!node.error.empty()) out["error"] = node.error;
  return out;
}

// A daemon that answered 401 (no token, or one it does not accept): retrying every second for the
// whole --duration cannot help, as the token comes from the environment. The message names the
// variable, as `zeus measure`'s does; "" when no node was refused so.
std::string unauthorized(const ClusterPower& now) {
  for (const NodePower& node : now.nodes) {
    if (node.refused_status != 401) continue;
    const char* token = std::getenv("ZEUSD_TOKEN");
    const bool none = token == nullptr || *token == '\0';
    return "zeusd " + node.endpoint + " refused " +
           (none ? std::string("the request without a token")
                 : std::string("the token in ZEUSD_TOKEN")) +
           (node.error.empty() ? " (HTTP 401)" : " (" + node.error + ")") + "; " +
           (none ? "set ZEUSD_TOKEN to a token from `zeusd token issue` with the gpu-read scope "
                   "(and cpu-read for CPUs)"
                 : "set ZEUSD_TOKEN to a token of that zeusd's signing key, unexpired, with the "
                   "gpu-read scope (`zeusd token issue`)");
  }
  return "";
}

}  // namespace

void run_remote_power(const RemotePowerArgs& args, const std::atomic<bool>& stop) {
  std::vector<PowerStreamTarget> targets = zeusd_stream_targets(args.from, args.gpus);
  std::mutex out_mu;  // rows and events come from different threads
  PowerStreamingOptions options;
  if (args.json && args.events) {
    options.on_event = [&out_mu](const PowerStreamEvent& e) {
      nlohmann::json line{{"event", true},
                          {"endpoint", e.endpoint},
                          {e.gpu ? "gpu_id" : "cpu_id", e.device_id},
                          {"power_w", e.power_w},
                          {"timestamp_s", e.timestamp_s},
                          {"received_s", e.received_s}};
      if (!e.gpu) line["dram_w"] = e.dram_w ? nlohmann::json(*e.dram_w) : nullptr;
      std::lock_guard<std::mutex> lock(out_mu);
      std::cout << line.dump() << std::endl;
    };
  }
  auto client = value_or_die(PowerStreamingClient::start(std::move(targets), options));
  const double start_s = unix_now_s();
  const bool bounded = args.duration_s > 0;
  if (!args.json) {
    std::cout << pad_left("time_s", 9);
    for (const std::string& address : args.from) std::cout << "  " << address << "_w";
    std::cout << pad_left("cluster_w", 12) << pad_left("energy_j", 14) << std::endl;
  }
  for (uint64_t k = 1; !stop.load(); ++k) {
    double due_s = start_s + static_cast<double>(k) * args.interval_s;
    const bool last = bounded && due_s >= start_s + args.duration_s - 1e-9;
    if (last) due_s = start_s + args.duration_s;
    while (!stop.load() && unix_now_s() < due_s) {
      if (const std::string refused = unauthorized(client->power()); !refused.empty()) {
        client->stop();
        die(refused);
      }
      std::this_thread::sleep_for(
          std::chrono::duration<double>(std::min(0.05, due_s - unix_now_s())));
    }
    if (stop.load()) break;
    const ClusterPower now = client->power();
    std::lock_guard<std::mutex> lock(out_mu);
    if (args.json) {
      nlohmann::json row{{"time_s", now.timestamp_s - start_s},
                         {"power_w", nlohmann::json::object()},
                         {"energy_j", nlohmann::json::object()},
                         {"cluster_power_w", now.power_w},
                         {"cluster_energy_j", now.energy_j}};
      for (const NodePower& node : now.nodes) {
        row["power_w"][node.endpoint] = node.connected ? nlohmann::json(node.power_w) : nullptr;
        row["energy_j"][node.endpoint] = node.energy_j;
      }
      std::cout << row.dump() << std::endl;
    } else {
      std::cout << pad_left(format_fixed(now.timestamp_s - start_s, 2), 9);
      for (const NodePower& node : now.nodes) {
        const std::string cell = node.connected ? format_fixed(node.power_w, 1) : "down";
        std::cout << pad_left(cell, static_cast<int>(node.endpoint.size()) + 4);
      }
      std::cout << pad_left(format_fixed(now.power_w, 1), 12)
                << pad_left(format_fixed(now.energy_j, 1), 14) << std::endl;
    }
    if (last) break;
  }
  const ClusterPower total = client->power();
  client->stop();
  nlohmann::json summary{{"summary", true},
                         {"timestamp_s", total.timestamp_s},
                         {"duration_s", total.timestamp_s - start_s},
                         {"cluster_power_w", total.power_w},
                         {"cluster_energy_j", total.energy_j},
                         {"nodes", nlohmann::json::array()}};
  for (const NodePower& node : total.nodes) summary["nodes"].push_back(node_json(node));
  if (args.json) {
    std::cout << summary.dump() << std::endl;
    return;
  }
  std::cout << "\nzeus power: totals over " << format_fixed(total.timestamp_s - start_s, 2)
            << " s\n";
  for (const NodePower& node : total.nodes) {
    std::cout << "  " << node.endpoint << ": " << format_fixed(node.energy_j, 1) << " J, now "
              << format_fixed(node.power_w, 1) << " W (clock offset "
              << format_fixed(node.clock_offset_s * 1000, 1) << " ms, " << node.events
              << " readings, " << node.reconnects << " reconnects)"
              << (node.error.empty() ? "" : "; last error: " + node.error) << "\n";
  }
  std::cout << "  cluster: " << format_fixed(total.energy_j, 1) << " J, now "
            << format_fixed(total.power_w, 1) << " W" << std::endl;
}

}  // namespace zeus::cli
