// zeus power: live power draw per GPU until interrupted (or for --duration), then totals.
#include <signal.h>

#include <atomic>
#include <iostream>
#include <memory>

#include "cli_util.h"
#include "commands.h"
#include "measurement_report.h"
#include "zeus/clock.h"
#include "zeus/energy_monitor.h"

namespace zeus::cli {
namespace {

std::atomic<bool> g_stop{false};
void request_stop(int) { g_stop.store(true); }

struct PowerArgs {
  double interval_s = 1.0;
  double duration_s = 0.0;
  std::string gpus;
  bool json = false;
};

void run_power(const PowerArgs& args) {
  if (!(args.interval_s >= 0.01)) die("--interval must be at least 0.01 s");
  if (args.duration_s < 0) die("--duration must not be negative");
  Devices devices = discover_or_die(true, true);
  if (devices.gpus.empty()) die("no GPU found: " + gpu_backend_reasons(devices));
  EnergyMonitorOptions options;
  if (!args.gpus.empty()) options.gpu_indices = parse_index_list(args.gpus, "--gpus");
  SystemClock clock;
  auto monitor = value_or_die(EnergyMonitor::create(devices, clock, options));
  const std::vector<int> indices = monitor->gpu_indices();
  signal(SIGINT, request_stop);
  signal(SIGTERM, request_stop);
  value_or_die(monitor->begin_window("zeus_power"));
  const double start_s = clock.now_s();
  double next_s = start_s;
  if (!args.json) {
    std::cout << pad_left("time_s", 9);
    for (int i : indices) std::cout << pad_left("gpu" + std::to_string(i) + "_w", 9);
    std::cout << std::endl;
  }
  while (!g_stop.load()) {
    next_s += args.interval_s;
    while (!g_stop.load() && clock.now_s() < next_s) clock.sleep_for_s(std::min(0.05, next_s - clock.now_s()));
    if (g_stop.load()) break;
    const double t_s = clock.now_s() - start_s;
    nlohmann::json row;
    row["time_s"] = t_s;
    if (!args.json) std::cout << pad_left(format_fixed(t_s, 2), 9);
    for (int i : indices) {
      auto mw = devices.gpus[i]->instant_power_mw();
      if (args.json) {
        row["power_w"][std::to_string(i)] = mw ? nlohmann::json(*mw / 1000.0) : nlohmann::json(nullptr);
      } else {
        std::cout << pad_left(mw ? format_fixed(*mw / 1000.0, 1) : "n/a", 9);
      }
    }
    if (args.json) {
      std::cout << row.dump() << std::endl;
    } else {
      std::cout << std::endl;
    }
    if (args.duration_s > 0 && t_s >= args.duration_s - 1e-9) break;
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
  auto* cmd = app.add_subcommand("power", "Show live GPU power until Ctrl-C, then energy totals");
  cmd->add_option("--interval", args->interval_s, "Seconds between readings (default 1)");
  cmd->add_option("--duration", args->duration_s, "Stop after this many seconds (default: until Ctrl-C)");
  cmd->add_option("--gpus", args->gpus, "GPU indices, e.g. 0,1 (default: all visible)");
  cmd->add_flag("--json", args->json,
                "One JSON object per reading {time_s, power_w: {\"0\": W}}, then a summary object "
                "with the keys of 'zeus measure --json' and \"summary\": true");
  cmd->footer("Examples:\n  zeus power --interval 0.5\n  zeus power --duration 10 --json > power.jsonl");
  cmd->callback([args] { run_power(*args); });
}

}  // namespace zeus::cli
