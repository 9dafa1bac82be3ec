// zeus power: live power draw per GPU (in the chosen power domains) and temperature until
// interrupted (or for --duration), then totals.
#include <signal.h>

#include <atomic>
#include <iostream>
#include <memory>
#include <optional>

#include "cli_util.h"
#include "commands.h"
#include "measurement_report.h"
#include "power_remote.h"
#include "zeus/clock.h"
#include "zeus/energy_monitor.h"
#include "zeus/power_domain.h"

namespace zeus::cli {
namespace {

std::atomic<bool> g_stop{false};
void request_stop(int) { g_stop.store(true); }

struct PowerArgs {
  double interval_s = 1.0;
  double duration_s = 0.0;  // 0: until Ctrl-C
  std::optional<std::vector<int>> gpus;
  std::vector<std::string> domains;  // names; empty: device_instant
  bool json = false;
  std::vector<std::string> from;  // zeusd addresses: their power streams instead of local GPUs
  bool events = false;
};

// The column suffix of a domain in the text table: gpu0_w, gpu0_avg_w, gpu0_mem_w.
std::string column_suffix(PowerDomain domain) {
  switch (domain) {
    case PowerDomain::kDeviceInstant:
      return "_w";
    case PowerDomain::kDeviceAverage:
      return "_avg_w";
    case PowerDomain::kMemoryAverage:
      return "_mem_w";
  }
  return "_w";
}

// The requested domains, checked against what the GPUs support (usage error 2 for a bad name).
std::vector<PowerDomain> chosen_domains(const std::vector<std::string>& names,
                                        const std::vector<Gpu*>& gpus) {
  std::optional<std::vector<PowerDomain>> requested;
  if (!names.empty()) {
    requested.emplace();
    for (const std::string& name : names) {
      auto domain = parse_power_domain(name);
      if (!domain) die("--domain: " + domain.error().message, 2);
      requested->push_back(*domain);
    }
  } else {
    requested = std::vector<PowerDomain>{PowerDomain::kDeviceInstant};
  }
  return value_or_die(choose_power_domains(requested, supported_power_domains(gpus)));
}

void run_power(const PowerArgs& args) {
  if (!args.from.empty()) {
    if (!args.domains.empty()) die("--domain reads local GPUs; it cannot be used with --from", 2);
    signal(SIGINT, request_stop);
    signal(SIGTERM, request_stop);
    run_remote_power(
        {args.from, args.gpus, args.interval_s, args.duration_s, args.json, args.events}, g_stop);
    return;
  }
  if (args.events) die("--events needs --from (it prints the readings of zeusd's streams)", 2);
  Devices devices = discover_or_die(true, true);
  if (devices.gpus.empty()) die("no GPU found: " + gpu_backend_reasons(devices));
  EnergyMonitorOptions options;
  if (args.gpus) options.gpu_indices = *args.gpus;
  SystemClock clock;
  auto monitor = value_or_die(EnergyMonitor::create(devices, clock, options));
  const std::vector<int> indices = monitor->gpu_indices();
  std::vector<Gpu*> monitored;
  for (int i : indices) monitored.push_back(devices.gpus[i].get());
  const std::vector<PowerDomain> domains = chosen_domains(args.domains, monitored);
  signal(SIGINT, request_stop);
  signal(SIGTERM, request_stop);
  value_or_die(monitor->begin_window("zeus_power"));
  const double start_s = clock.now_s();
  const bool bounded = args.duration_s > 0;
  if (!args.json) {
    std::cout << pad_left("time_s", 9);
    for (int i : indices) {
      for (PowerDomain d : domains) {
        std::cout << pad_left("gpu" + std::to_string(i) + column_suffix(d), 11);
      }
      std::cout << pad_left("gpu" + std::to_string(i) + "_c", 8);
    }
    std::cout << std::endl;
  }
  // Reading k is due k intervals after the start (no drift from adding up intervals); with
  // --duration the last one is due exactly at the deadline, even when an interval is longer
  // (probe item B10).
  for (uint64_t k = 1; !g_stop.load(); ++k) {
    double due_s = start_s + static_cast<double>(k) * args.interval_s;
    const bool last = bounded && due_s >= start_s + args.duration_s - 1e-9;
    if (last) due_s = start_s + args.duration_s;
    while (!g_stop.load() && clock.now_s() < due_s) {
      clock.sleep_for_s(std::min(0.05, due_s - clock.now_s()));
    }
    if (g_stop.load()) break;
    const double t_s = clock.now_s() - start_s;
    nlohmann::json row;
    row["time_s"] = t_s;
    if (!args.json) std::cout << pad_left(format_fixed(t_s, 2), 9);
    for (int i : indices) {
      const std::string key = std::to_string(i);
      for (PowerDomain d : domains) {
        auto mw = read_power_mw(*devices.gpus[i], d);
        const nlohmann::json watts = mw ? nlohmann::json(*mw / 1000.0) : nlohmann::json(nullptr);
        // "power_w" keeps the first domain (device_instant unless --domain says otherwise).
        if (d == domains.front()) row["power_w"][key] = watts;
        row["domains"][power_domain_name(d)][key] = watts;
        if (!args.json) std::cout << pad_left(mw ? format_fixed(*mw / 1000.0, 1) : "n/a", 11);
      }
      auto celsius = devices.gpus[i]->temperature_c();
      row["temperature_c"][key] = celsius ? nlohmann::json(*celsius) : nlohmann::json(nullptr);
      if (!args.json) std::cout << pad_left(celsius ? std::to_string(*celsius) : "n/a", 8);
    }
    if (args.json) {
      std::cout << row.dump() << std::endl;
    } else {
      std::cout << std::endl;
    }
    if (last) break;
  }
  auto measurement = value_or_die(monitor->end_window("zeus_power"));
  if (args.json) {
    nlohmann::json total = measurement_json(measurement);
    total["summary"] = true;
    std::cout << total.dump() << std::endl;
  } else {
    std::cout << "\nzeus power: totals\n";
    print_measurement(std::cout, measurement);
  }
}

}  // namespace

void add_power_command(CLI::App& app) {
  auto args = std::make_shared<PowerArgs>();
  auto* cmd = app.add_subcommand(
      "power", "Show live GPU power until Ctrl-C (or for --duration), then energy totals");
  add_parsed_option(
      *cmd, "--interval", args->interval_s,
      [](const std::string& text) { return parse_seconds(text, "--interval", {0.01, false}); },
      "Time between readings: seconds, or 500ms, 2m, 1h (default 1; at least 0.01 s)")
      ->type_name("TIME");
  add_parsed_option(
      *cmd, "--duration", args->duration_s,
      [](const std::string& text) { return parse_seconds(text, "--duration", {0.01, true}); },
      "Stop after this time: seconds, or 500ms, 2m, 1h; the last reading and the totals are "
      "taken at that time, even when --interval is longer. 0 (the default): until Ctrl-C")
      ->type_name("TIME");
  add_parsed_option(
      *cmd, "--gpus", args->gpus,
      [](const std::string& text) { return parse_int_list(text, "--gpus", kGpuIndices); },
      "GPU indices, e.g. 0,1 (default: all visible)")
      ->type_name("LIST");
  cmd->add_option("--domain", args->domains,
                  "Power domains to show, comma-separated: device_instant (the default), "
                  "device_average, memory_average (the memory's average power, e.g. on H100)")
      ->delimiter(',')
      ->type_name("LIST");
  cmd->add_flag("--json", args->json,
                "One JSON object per reading {time_s, power_w: {\"0\": W} (the first domain), "
                "domains: {name: {\"0\": W}}, temperature_c: {\"0\": C}}, then a summary object "
                "with the keys of 'zeus measure --json' and \"summary\": true");
  cmd->add_option("--from", args->from,
                  "Stream the power of these zeusd daemons instead of this machine's GPUs, "
                  "comma-separated: HOST:PORT (zeusd --tcp), unix:/path or /path (its socket). "
                  "Shows per-daemon and cluster power and energy, each daemon's clock corrected")
      ->delimiter(',')
      ->type_name("LIST");
  cmd->add_flag("--events", args->events,
                "With --from --json: also one line per reading as it arrives {event: true, "
                "endpoint, gpu_id|cpu_id, power_w, timestamp_s (daemon time on this clock), "
                "received_s}");
  cmd->footer(
      "Examples:\n  zeus power --interval 0.5\n"
      "  zeus power --from node1:4938,node2:4938\n"
      "  zeus power --domain device_instant,memory_average\n"
      "  zeus power --duration 10 --json > power.jsonl");
  cmd->callback([args] { run_power(*args); });
}

}  // namespace zeus::cli
