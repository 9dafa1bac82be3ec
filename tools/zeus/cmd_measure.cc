// zeus measure: run a command and report the time and energy it took, like `perf stat`.
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>

#include "accounting_report.h"
#include "child_process.h"
#include "cli_util.h"
#include "commands.h"
#include "measurement_report.h"
#include "zeus/common/clock.h"
#include "zeus/monitor/energy_monitor.h"

namespace zeus::cli {
namespace {

struct MeasureArgs {
  std::optional<std::vector<int>> gpus;
  bool cpus = false;
  bool no_cpus = false;
  bool json = false;
  bool approximate = false;
  std::string log_file;
  std::string carbon;  // a provider spec: the window's emissions too
  std::string price;   // a provider spec: its electricity cost too
  std::vector<std::string> command;
};

// Exit status of zeus itself when the command's own cannot be used (documented in --help).
constexpr int kEnergyLostExit = 74;  // EX_IOERR: the command succeeded, the last reading failed

void run_measure(const MeasureArgs& args) {
  if (args.command.empty()) die("no command to measure: write it after --, e.g. zeus measure -- python train.py");
  Devices devices = discover_or_die(true, !args.no_cpus);
  EnergyMonitorOptions options;
  if (args.gpus) {
    options.gpu_indices = *args.gpus;
    if (devices.gpus.empty()) {
      die("--gpus asks for GPUs, but none was found: " + gpu_backend_reasons(devices));
    }
  }
  if (args.no_cpus) {
    options.cpu_indices = std::vector<int>{};
  } else if (args.cpus) {
    if (devices.cpus.empty()) {
      std::string why = "no RAPL zone found";
      for (const auto& b : devices.backends) {
        if (b.backend == "rapl") why = b.detail;
      }
      die("--cpus asks for CPU energy, but it cannot be read: " + why);
    }
    std::vector<int> all;
    for (size_t i = 0; i < devices.cpus.size(); ++i) all.push_back(static_cast<int>(i));
    options.cpu_indices = all;
  }
  // A run that can measure nothing must not report 0 J as if it had.
  if (devices.gpus.empty() && (args.no_cpus || devices.cpus.empty()) && !devices.soc) {
    std::string reasons = gpu_backend_reasons(devices);
    for (const auto& b : devices.backends) {
      if (b.backend == "rapl" && !args.no_cpus) reasons += "; rapl: " + b.detail;
    }
    die("nothing can be measured on this machine (" + reasons +
            "); the command was not run. Measure on a machine with an NVIDIA or AMD GPU or readable "
            "RAPL counters (CPU energy needs root since Linux 5.10), or set ZEUS_NVML_PATH",
        kNothingToMeasureExit);
  }
  options.log_file = args.log_file;
  options.log_append = true;  // --log appends (the file must be an energy log with the same columns)
  options.approximate_zero_energy = args.approximate;
  SystemClock clock;
  std::vector<Accounting> accounting;
  if (!args.carbon.empty()) {
    accounting.push_back(start_accounting("carbon", args.carbon, devices, clock, options));
  }
  if (!args.price.empty()) {
    accounting.push_back(start_accounting("cost", args.price, devices, clock, options));
  }
  auto monitor = value_or_die(EnergyMonitor::create(devices, clock, options));
  for (Accounting& a : accounting) value_or_die(a.monitor->begin_window("zeus_measure"));
  value_or_die(monitor->begin_window("zeus_measure"));
  const auto started_at = std::chrono::steady_clock::now();
  const int exit_code = run_command_or_die(args.command);
  auto ended = monitor->end_window("zeus_measure");
  std::vector<Result<AccountedMeasurement>> accounted;
  for (Accounting& a : accounting) accounted.push_back(a.monitor->end_window("zeus_measure", false));
  if (!ended) {
    // The command ran; its time and exit code survive a failed last reading.
    const double time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at).count();
    if (args.json) {
      nlohmann::json j = {{"command", args.command},
                          {"exit_code", exit_code},
                          {"time_s", time_s},
                          {"error", "the energy reading at the end failed: " + ended.error().message}};
      std::cout << j.dump() << "\n";
    }
    std::cerr << "zeus: the command ran " << format_fixed(time_s, 3) << " s and exited " << exit_code
              << ", but reading the energy at the end failed: " << ended.error().message << "\n";
    throw CLI::RuntimeError(exit_code != 0 ? exit_code : kEnergyLostExit);
  }
  Measurement measurement = std::move(*ended);
  if (args.json) {
    nlohmann::json j = measurement_json(measurement);
    j["command"] = args.command;
    j["exit_code"] = exit_code;
    for (size_t i = 0; i < accounting.size(); ++i) {
      const std::string provider = accounting[i].monitor->provider().describe();
      if (accounted[i]) {
        j[accounting[i].key] = accounted_json(*accounted[i], provider);
      } else {
        j[accounting[i].key] = {{"provider", provider}, {"complete", false},
                                {"unknown_reason", accounted[i].error().message}};
      }
    }
    std::cout << j.dump() << "\n";
  } else {
    std::string line;
    for (const auto& a : args.command) line += (line.empty() ? "" : " ") + a;
    std::cerr << "\nzeus measure: " << line << "\n";
    std::cerr << "  exit code     " << exit_code
              << (ChildProcess::interrupted() ? " (interrupted)" : "") << "\n";
    print_measurement(std::cerr, measurement);
    for (size_t i = 0; i < accounting.size(); ++i) {
      const std::string provider = accounting[i].monitor->provider().describe();
      if (accounted[i]) {
        print_accounted(std::cerr, accounting[i].label, *accounted[i], provider);
      } else {
        std::cerr << "  " << accounting[i].label << ": unknown (" << accounted[i].error().message
                  << ")\n";
      }
    }
  }
  if (exit_code != 0) throw CLI::RuntimeError(exit_code);
}

}  // namespace

void add_measure_command(CLI::App& app) {
  auto args = std::make_shared<MeasureArgs>();
  auto* cmd = app.add_subcommand("measure", "Run a command and report its time and energy");
  add_parsed_option(
      *cmd, "--gpus", args->gpus,
      [](const std::string& text) { return parse_int_list(text, "--gpus", kGpuIndices); },
      "GPU indices to measure, e.g. 0,1 (default: all visible)")
      ->type_name("LIST");
  CLI::Option* cpus = cmd->add_flag("--cpus", args->cpus,
                                    "Require CPU/DRAM energy (RAPL); error if it cannot be read");
  cmd->add_flag("--no-cpus", args->no_cpus, "Do not measure CPUs")->excludes(cpus);
  cmd->add_flag("--json", args->json,
                "Print one JSON object on stdout: command, exit_code, time_s, gpu_energy_j, "
                "cpu_energy_j, dram_energy_j, total_energy_j (GPUs only, as upstream Zeus's "
                "Measurement.total_energy), total_energy_with_cpu_j (GPUs + CPU packages + "
                "DRAM), average_power_w, average_power_with_cpu_w");
  cmd->add_flag("--approx-zero", args->approximate,
                "When a GPU counter reads 0 J (window shorter than its update period), use "
                "instant power x time instead");
  cmd->add_option("--log", args->log_file, "Append a CSV row (start_time,window_name,...) to FILE; an existing FILE must be such a log with the same columns");
  cmd->add_option("--carbon", args->carbon,
                  "Also report the command's emissions (gCO2eq), each hour at its grid carbon "
                  "intensity: csv:FILE[:LOCATION] (columns timestamp,duration,value), "
                  "electricitymaps:LAT,LON (key in ELECTRICITYMAPS_API_KEY)")
      ->type_name("PROVIDER");
  cmd->add_option("--price", args->price,
                  "Also report its electricity cost ($) at a time-of-use rate: "
                  "openei:LAT,LON,LABEL (key in OPENEI_API_KEY) or csv:FILE ($/kWh values)")
      ->type_name("PROVIDER");
  cmd->add_option("command", args->command, "The command to run, after --")->expected(-1);
  cmd->footer(
      "The report goes to stderr (so the command's own stdout stays clean); --json prints to\n"
      "stdout. zeus exits with the command's exit code (128+N if signal N ended it). Signals\n"
      "sent to zeus are forwarded to the command; Ctrl-C stops the command and zeus still\n"
      "prints what was measured. CPUs are measured when RAPL is readable (root since Linux\n"
      "5.10). zeus's own exit statuses: 69 when nothing can be measured (no GPU, no readable\n"
      "RAPL; the command is not run), 74 when the command succeeded but the last energy\n"
      "reading failed (its time is still printed), 126 when the command cannot be executed and\n"
      "127 when it is not found (as a shell). Examples:\n"
      "  zeus measure -- python train.py --epochs 1\n"
      "  zeus measure --gpus 0 --json -- ./bench | jq .total_energy_j");
  cmd->callback([args] { run_measure(*args); });
}

}  // namespace zeus::cli
