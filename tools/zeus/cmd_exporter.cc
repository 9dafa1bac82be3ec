// zeus exporter: GPU and CPU energy and power as Prometheus metrics on /metrics, optionally
// pushed to a Pushgateway. Scrapes read the sampler's latest snapshot, never the hardware; with
// --from, also the power and energy of many nodes streamed from their zeusd daemons.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <thread>

#include "cli_util.h"
#include "commands.h"
#include "zeus/client/power_streaming_client.h"
#include "zeus/common/clock.h"
#include "zeus/exporter/exporter.h"
#include "zeusd_streams.h"

namespace zeus::cli {
namespace {

std::atomic<bool> g_stop{false};
void request_stop(int) { g_stop.store(true); }

struct ExporterArgs {
  ExporterOptions options;
  double duration_s = 0.0;        // 0: until Ctrl-C
  std::vector<std::string> from;  // zeusd addresses whose power streams are served too
};

void run_exporter(const ExporterArgs& args) {
  Devices devices = discover_or_die(true, true);
  // With --from, a collector host without GPUs of its own serves the streamed nodes only.
  if (devices.gpus.empty() && devices.cpus.empty() && args.from.empty()) {
    die("no GPU or CPU to export: " + gpu_backend_reasons(devices) +
        " (RAPL needs root, or zeusd: set ZEUSD_SOCK_PATH; or serve other nodes' zeusd with "
        "--from)");
  }
  std::unique_ptr<PowerStreamingClient> streams;
  ExporterOptions options = args.options;
  if (!args.from.empty()) {
    streams = value_or_die(PowerStreamingClient::start(zeusd_stream_targets(args.from)));
    options.streams = streams.get();
  }
  SystemClock clock;
  auto exporter = value_or_die(MetricsExporter::start(devices, clock, options));
  signal(SIGINT, request_stop);
  signal(SIGTERM, request_stop);
  // The first line names the port (tests start with --port 0 and read it from here).
  std::cout << "zeus exporter: serving http://" << args.options.bind_address << ":"
            << exporter->port() << "/metrics (" << devices.gpus.size() << " GPU(s), "
            << devices.cpus.size() << " CPU package(s), every " << args.options.interval_s << " s"
            << (streams ? "; " + std::to_string(args.from.size()) + " zeusd node(s) streamed" : "")
            << ")" << std::endl;
  if (!args.options.push_url.empty()) {
    std::cout << "zeus exporter: pushing to " << args.options.push_url << " every "
              << args.options.push_interval_s << " s" << std::endl;
  }
  const auto start = std::chrono::steady_clock::now();
  while (!g_stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double elapsed_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (args.duration_s > 0 && elapsed_s >= args.duration_s) break;
  }
  exporter.reset();  // no scrape reads the streams after this
  if (streams) streams->stop();
  std::cout << "zeus exporter: stopped" << std::endl;
}

}  // namespace

void add_exporter_command(CLI::App& app) {
  auto args = std::make_shared<ExporterArgs>();
  auto* cmd =
      app.add_subcommand("exporter", "Serve GPU/CPU energy and power as Prometheus metrics");
  cmd->add_option("--port", args->options.port,
                  "Port of /metrics (default 9400; 0: any free port, printed)");
  cmd->add_option("--bind", args->options.bind_address,
                  "Address to listen on (default 127.0.0.1, this machine only; 0.0.0.0 lets a "
                  "Prometheus on another host scrape it)");
  cmd->add_option("--interval", args->options.interval_s,
                  "Seconds between device readings (default 1)");
  cmd->add_option("--push", args->options.push_url,
                  "Also push to this Pushgateway, e.g. http://gateway:9091");
  cmd->add_option("--push-interval", args->options.push_interval_s,
                  "Seconds between pushes (default 10)");
  cmd->add_option("--job", args->options.push_job, "Pushgateway job label (default zeus)");
  add_parsed_option(
      *cmd, "--duration", args->duration_s,
      [](const std::string& text) {
        return parse_seconds(text, "--duration", {0.01, true, 366 * 86400.0});
      },
      "Stop after this time: seconds, or 500ms, 2m, 1h. 0 (the default): until Ctrl-C")
      ->type_name("TIME");
  add_zeusd_from_option(*cmd, args->from,
                        "Also serve the live power and energy of these zeusd daemons (nodes)",
                        "Adds zeus_node_* per node (label node: the address as given) and "
                        "zeus_cluster_* sums; this machine's devices are served too when it "
                        "has any");
  cmd->footer(
      "Metrics: zeus_gpu_energy_joules_total{gpu,uuid,model} (counter), zeus_gpu_power_watts,\n"
      "zeus_gpu_power_limit_watts, zeus_cpu_energy_joules_total{package,zone} (counter).\n"
      "With --from: zeus_node_gpu_power_watts{node,gpu}, zeus_node_cpu_power_watts{node,package,\n"
      "zone}, zeus_node_power_watts{node}, zeus_node_energy_joules_total{node} (counter, since\n"
      "the exporter started), zeus_node_connected{node} (1/0), zeus_node_reconnects_total{node},\n"
      "zeus_node_clock_offset_seconds{node}, zeus_cluster_power_watts,\n"
      "zeus_cluster_energy_joules_total (counter).\n"
      "RAPL needs root; with ZEUSD_SOCK_PATH set, CPUs are read through zeusd.\n"
      "Examples:\n  zeus exporter --port 9400\n  zeus exporter --interval 5 --push "
      "http://pushgateway:9091\n"
      "  ZEUSD_TOKEN=... zeus exporter --bind 0.0.0.0 --from node1:4938,node2:4938,"
      "unix:/run/zeusd/zeusd.sock");
  cmd->callback([args] { run_exporter(*args); });
}

}  // namespace zeus::cli
