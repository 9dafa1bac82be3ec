// zeus power: live power draw per GPU (in the chosen power domains) and temperature, and with
// --cpu each CPU package's and DRAM's power (RAPL), until interrupted (or for --duration), then
// totals. Output: a table, one JSON object per reading (--json), or a live graph redrawn in place
// on a terminal (--plot; a table with a note on stderr when stdout is not a terminal).
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "cli_util.h"
#include "commands.h"
#include "measurement_report.h"
#include "power_plot.h"
#include "power_remote.h"
#include "zeus/common/clock.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/monitor/power_domain.h"
#include "zeus/monitor/power_monitor.h"
#include "zeusd_streams.h"

namespace zeus::cli {
namespace {

std::atomic<bool> g_power_stop{false};
void request_power_stop(int) { g_power_stop.store(true); }

struct PowerArgs {
  double interval_s = 1.0;
  double duration_s = 0.0;  // 0: until Ctrl-C
  std::optional<std::vector<int>> gpus;
  std::vector<std::string> domains;  // names; empty: device_instant
  bool json = false;
  bool cpu = false;
  bool plot = false;
  std::vector<std::string> from;  // zeusd addresses: their power streams instead of local GPUs
  bool events = false;
  size_t plot_rows = 0;  // 0: as many as the terminal's height gives every graph (1 to 8)
};

// The column suffix of a domain in the text table: gpu0_w, gpu0_avg_w, gpu0_mem_w, cpu0_pkg_w,
// cpu0_dram_w.
std::string column_suffix(PowerDomain domain) {
  switch (domain) {
    case PowerDomain::kDeviceInstant:
      return "_w";
    case PowerDomain::kDeviceAverage:
      return "_avg_w";
    case PowerDomain::kMemoryAverage:
      return "_mem_w";
    case PowerDomain::kCpuPackageAverage:
      return "_pkg_w";
    case PowerDomain::kCpuDramAverage:
      return "_dram_w";
  }
  return "_w";
}

// The requested GPU domains, checked against what the GPUs support (usage error 2 for a bad
// name or a CPU domain, which --cpu shows).
std::vector<PowerDomain> chosen_domains(const std::vector<std::string>& names,
                                        const std::vector<Gpu*>& gpus) {
  std::optional<std::vector<PowerDomain>> requested;
  if (!names.empty()) {
    requested.emplace();
    for (const std::string& name : names) {
      auto domain = parse_power_domain(name);
      if (!domain) die("--domain: " + domain.error().message, 2);
      if (is_cpu_power_domain(*domain)) {
        die("--domain takes GPU domains; " + name +
                " is a CPU domain: add --cpu to show every CPU package's and DRAM's power",
            2);
      }
      requested->push_back(*domain);
    }
  } else {
    requested = std::vector<PowerDomain>{PowerDomain::kDeviceInstant};
  }
  if (gpus.empty()) return {};
  return value_or_die(choose_power_domains(requested, supported_power_domains(gpus)));
}

// Why RAPL gave no CPU package, from discovery's report.
std::string rapl_reason(const Devices& devices) {
  for (const auto& b : devices.backends) {
    if (b.backend == "rapl" && !b.used) return b.detail;
  }
  return "no package zone";
}

// The terminal's extent along one axis: stdout's, else the environment's `variable` ($LINES,
// $COLUMNS), else `fallback`.
size_t terminal_extent(bool lines, const char* variable, size_t fallback) {
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0) {
    const size_t extent = lines ? size.ws_row : size.ws_col;
    if (extent > 0) return extent;
  }
  if (const char* text = std::getenv(variable)) {
    const long parsed = std::strtol(text, nullptr, 10);
    if (parsed > 0) return static_cast<size_t>(parsed);
  }
  return fallback;
}

size_t terminal_lines() { return terminal_extent(true, "LINES", 24); }
size_t terminal_columns() { return terminal_extent(false, "COLUMNS", 80); }

// --plot draws only where escapes work: stdout a terminal whose TERM is not "dumb".
bool can_plot() {
  const char* term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) == 1 && !(term != nullptr && std::string(term) == "dumb");
}

std::string watts_cell(const std::optional<double>& watts) {
  return watts ? format_fixed(*watts, 1) : "n/a";
}

class PowerView {
 public:
  PowerView(const PowerArgs& args, Devices& devices, std::vector<int> gpus,
            std::vector<PowerDomain> domains, PowerMonitor* cpu_monitor)
      : args_(args),
        devices_(devices),
        gpus_(std::move(gpus)),
        domains_(std::move(domains)),
        cpu_monitor_(cpu_monitor) {
    if (!args_.plot) return;
    width_ = std::clamp<size_t>(terminal_columns(), 12, 242) - 2;
    for (int i : gpus_) {
      PowerPlotSeries s;
      s.label = "GPU " + std::to_string(i);
      if (auto range = devices_.gpus[i]->power_limit_range_mw())
        s.scale_max_w = range->max_mw / 1000.0;
      plot_.push_back(s);
    }
    for (int c : cpu_indices()) {
      for (PowerDomain d : cpu_monitor_->domains()) {
        PowerPlotSeries s;
        s.label = "CPU " + std::to_string(c) +
                  (d == PowerDomain::kCpuPackageAverage ? " package" : " DRAM");
        plot_.push_back(s);
      }
    }
    // Rows per graph: as given, else what lets every graph (a header line and its rows) and the
    // command's own two lines fit in the terminal, so nothing scrolls off the top.
    rows_ = args_.plot_rows > 0 ? args_.plot_rows
                                : plot_rows_to_fit(terminal_lines(), plot_.size());
  }

  void header() const {
    if (args_.json) return;
    if (args_.plot) {
      std::cout << "zeus power: every " << format_fixed(args_.interval_s, 2)
                << " s; newest reading on the right; Ctrl-C ends with the totals" << std::endl;
      return;
    }
    std::cout << pad_left("time_s", 9);
    for (int i : gpus_) {
      for (PowerDomain d : domains_) {
        std::cout << pad_left("gpu" + std::to_string(i) + column_suffix(d), 11);
      }
      std::cout << pad_left("gpu" + std::to_string(i) + "_c", 8);
    }
    for (int c : cpu_indices()) {
      for (PowerDomain d : cpu_monitor_->domains()) {
        std::cout << pad_left("cpu" + std::to_string(c) + column_suffix(d), 12);
      }
    }
    std::cout << std::endl;
  }

  // Reads every device once and shows the reading.
  void show(double t_s) {
    nlohmann::json row;
    row["time_s"] = t_s;
    std::string cells = pad_left(format_fixed(t_s, 2), 9);
    size_t series = 0;
    for (int i : gpus_) {
      const std::string key = std::to_string(i);
      std::string detail;
      for (PowerDomain d : domains_) {
        auto mw = read_power_mw(*devices_.gpus[i], d);
        const std::optional<double> watts = mw ? std::optional<double>(*mw / 1000.0) : std::nullopt;
        const nlohmann::json value = watts ? nlohmann::json(*watts) : nlohmann::json(nullptr);
        // "power_w" keeps the first domain (device_instant unless --domain says otherwise).
        if (d == domains_.front()) {
          row["power_w"][key] = value;
          if (args_.plot) push(series, watts);
        }
        row["domains"][power_domain_name(d)][key] = value;
        cells += pad_left(watts_cell(watts), 11);
        detail += (detail.empty() ? "" : "  ") + watts_cell(watts) + " W" +
                  (domains_.size() > 1 ? " " + power_domain_name(d) : "");
      }
      auto celsius = devices_.gpus[i]->temperature_c();
      row["temperature_c"][key] = celsius ? nlohmann::json(*celsius) : nlohmann::json(nullptr);
      cells += pad_left(celsius ? std::to_string(*celsius) : "n/a", 8);
      if (args_.plot)
        plot_[series++].detail =
            detail + "  " + (celsius ? std::to_string(*celsius) + " C" : "n/a C");
    }
    for (int c : cpu_indices()) {
      for (PowerDomain d : cpu_monitor_->domains()) {
        // The CPU monitor's newest sample: the average since its previous tick.
        auto watts = cpu_monitor_->power_w(c, std::nullopt, d);
        const std::optional<double> value = watts ? *watts : std::nullopt;
        row["domains"][power_domain_name(d)][std::to_string(c)] =
            value ? nlohmann::json(*value) : nlohmann::json(nullptr);
        cells += pad_left(watts_cell(value), 12);
        if (args_.plot) {
          push(series, value);
          plot_[series++].detail = watts_cell(value) + " W";
        }
      }
    }
    if (args_.json) {
      std::cout << row.dump() << std::endl;
    } else if (args_.plot) {
      const auto lines = render_power_plot(plot_, width_, rows_);
      std::cout << redraw_in_place(lines, drawn_lines_) << std::flush;
      drawn_lines_ = lines.size();
    } else {
      std::cout << cells << std::endl;
    }
  }

 private:
  std::vector<int> cpu_indices() const {
    return cpu_monitor_ != nullptr ? cpu_monitor_->cpu_indices() : std::vector<int>{};
  }
  void push(size_t series, const std::optional<double>& watts) {
    auto& history = plot_[series].watts;
    history.push_back(watts ? *watts : std::nan(""));
    while (history.size() > width_) history.pop_front();
  }

  const PowerArgs& args_;
  Devices& devices_;
  std::vector<int> gpus_;
  std::vector<PowerDomain> domains_;
  PowerMonitor* cpu_monitor_;
  std::vector<PowerPlotSeries> plot_;
  size_t width_ = 78;
  size_t rows_ = 3;  // bar rows per graph
  size_t drawn_lines_ = 0;
};

void run_power(PowerArgs args) {
  if (!args.from.empty()) {
    if (!args.domains.empty()) die("--domain reads local GPUs; it cannot be used with --from", 2);
    if (args.cpu || args.plot) die("--cpu and --plot read local devices; not with --from", 2);
    signal(SIGINT, request_power_stop);
    signal(SIGTERM, request_power_stop);
    run_remote_power(
        {args.from, args.gpus, args.interval_s, args.duration_s, args.json, args.events}, g_power_stop);
    return;
  }
  if (args.events) die("--events needs --from (it prints the readings of zeusd's streams)", 2);
  if (args.plot && !can_plot()) {
    std::cerr << "zeus power: --plot draws in place on a terminal, and stdout is not one (or "
                 "TERM=dumb): printing one table row per reading instead (--json for scripts)"
              << std::endl;
    args.plot = false;
  }
  Devices devices = discover_or_die(true, true);
  if (devices.gpus.empty() && !args.cpu) {
    die("no GPU found: " + gpu_backend_reasons(devices) +
        " (--cpu shows the CPU packages' power alone)");
  }
  if (args.cpu && devices.cpus.empty()) {
    die("--cpu: no readable RAPL CPU package (" + rapl_reason(devices) +
        "); reading RAPL needs root since Linux 5.10: run as root, or drop --cpu");
  }
  EnergyMonitorOptions options;
  if (args.gpus) options.gpu_indices = *args.gpus;
  if (args.cpu) {
    options.cpu_indices.emplace();
    for (size_t c = 0; c < devices.cpus.size(); ++c)
      options.cpu_indices->push_back(static_cast<int>(c));
  }
  SystemClock clock;
  auto monitor = value_or_die(EnergyMonitor::create(devices, clock, options));
  const std::vector<int> indices = monitor->gpu_indices();
  std::vector<Gpu*> monitored;
  for (int i : indices) monitored.push_back(devices.gpus[i].get());
  const std::vector<PowerDomain> domains = chosen_domains(args.domains, monitored);
  std::unique_ptr<PowerMonitor> cpu_monitor;
  if (args.cpu) {
    std::map<int, Cpu*> cpus;
    for (int c : monitor->cpu_indices()) cpus[c] = devices.cpus[c].get();
    PowerMonitorOptions cpu_options;
    cpu_options.update_period_s = std::min(args.interval_s, 1.0);
    cpu_monitor =
        value_or_die(PowerMonitor::create(clock, {}, std::move(cpus), cpu_options), "--cpu");
  }
  PowerView view(args, devices, indices, domains, cpu_monitor.get());
  signal(SIGINT, request_power_stop);
  signal(SIGTERM, request_power_stop);
  value_or_die(monitor->begin_window("zeus_power"));
  const double start_s = clock.now_s();
  const bool bounded = args.duration_s > 0;
  view.header();
  // Reading k is due k intervals after the start (no drift from adding up intervals); with
  // --duration the last one is due exactly at the deadline, even when an interval is longer
  // (never an interval past it).
  for (uint64_t k = 1; !g_power_stop.load(); ++k) {
    double due_s = start_s + static_cast<double>(k) * args.interval_s;
    const bool last = bounded && due_s >= start_s + args.duration_s - 1e-9;
    if (last) due_s = start_s + args.duration_s;
    while (!g_power_stop.load() && clock.now_s() < due_s) {
      clock.sleep_for_s(std::min(0.05, due_s - clock.now_s()));
    }
    if (g_power_stop.load()) break;
    view.show(clock.now_s() - start_s);
    if (last) break;
  }
  if (cpu_monitor) cpu_monitor->stop();
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
      "power",
      "Show live GPU power and temperature (and with --cpu, CPU package and DRAM power) until "
      "Ctrl-C or --duration, then energy totals");
  add_parsed_option(
      *cmd, "--interval", args->interval_s,
      [](const std::string& text) {
        // Past a day is allowed: the readings stop at --duration whatever the interval.
        return parse_seconds(text, "--interval", {0.01, false, 1e9});
      },
      "Time between readings: seconds, or 500ms, 2m, 1h (default 1; at least 0.01 s)")
      ->type_name("TIME");
  add_parsed_option(
      *cmd, "--duration", args->duration_s,
      [](const std::string& text) {
        return parse_seconds(text, "--duration", {0.01, true, 366 * 86400.0});
      },
      "Stop after this time: seconds, or 500ms, 2m, 1h; the last reading and the totals are "
      "taken at that time, even when --interval is longer. 0 (the default): until Ctrl-C")
      ->type_name("TIME");
  add_parsed_option(
      *cmd, "--gpus", args->gpus,
      [](const std::string& text) { return parse_int_list(text, "--gpus", kGpuIndices); },
      "GPU indices, e.g. 0,1 (default: all visible)")
      ->type_name("LIST");
  cmd->add_option("--domain", args->domains,
                  "GPU power domains to show, comma-separated: device_instant (the default: "
                  "the draw now), device_average (the driver's moving average), memory_average "
                  "(the memory's average power, e.g. on H100). The first one is the graph's")
      ->delimiter(',')
      ->type_name("LIST");
  cmd->add_flag("--cpu", args->cpu,
                "Also show each RAPL CPU package's power (cpu_package_average) and its DRAM's "
                "(cpu_dram_average, when every package has a DRAM zone): the energy counters' "
                "change over the measured time between two reads. RAPL needs root since Linux "
                "5.10; an unreadable RAPL is an error. Without GPUs, shows the CPUs alone");
  CLI::Option* json = cmd->add_flag(
      "--json", args->json,
      "One JSON object per reading {time_s, power_w: {\"0\": W} (the first domain), domains: "
      "{name: {\"0\": W}} (CPU domains keyed by package), temperature_c: {\"0\": C}}, then a "
      "summary object with the keys of 'zeus measure --json' and \"summary\": true");
  cmd->add_flag("--plot", args->plot,
                "A live graph instead of the table: per GPU (and CPU domain) a line with its "
                "readings and temperature and a few rows of bars, newest on the right, redrawn "
                "in place. Needs a terminal: when stdout is not one (a pipe, a file, TERM=dumb) "
                "zeus says so on stderr and prints the table")
      ->excludes(json);
  add_parsed_option(
      *cmd, "--plot-rows", args->plot_rows,
      [](const std::string& text) -> Result<size_t> {
        auto rows = parse_count(text, "--plot-rows", 1, 20);
        if (!rows) return fail(rows.error());
        return static_cast<size_t>(*rows);
      },
      "Rows of bars per graph with --plot (1 to 20; default: as many as fit the terminal's "
      "height, at most 8)")
      ->type_name("N");
  add_zeusd_from_option(
      *cmd, args->from, "Stream the power of these zeusd daemons instead of this machine's GPUs",
      "Shows per-daemon and cluster power and energy, each daemon's clock corrected");
  cmd->add_flag("--events", args->events,
                "With --from --json: also one line per reading as it arrives {event: true, "
                "endpoint, gpu_id|cpu_id, power_w, timestamp_s (daemon time on this clock), "
                "received_s}");
  cmd->footer(
      "Columns: time_s, then per GPU its domains (gpu0_w, gpu0_avg_w, gpu0_mem_w) and\n"
      "temperature (gpu0_c), then with --cpu per package cpu0_pkg_w and cpu0_dram_w. n/a: the\n"
      "device did not answer that reading. The totals at the end are 'zeus measure''s: total\n"
      "(GPUs) as upstream Zeus's total_energy, and total with CPU when CPUs are measured.\n"
      "Examples:\n"
      "  zeus power --interval 0.5\n"
      "  zeus power --plot --interval 0.2          # live graph of every GPU\n"
      "  zeus power --from node1:4938,node2:4938   # many machines through their zeusd\n"
      "  zeus power --domain device_instant,memory_average --cpu\n"
      "  zeus power --duration 10 --json > power.jsonl");
  cmd->callback([args] { run_power(*args); });
}

}  // namespace zeus::cli
