// zeus proxy: in front of an OpenAI-compatible inference server, forwards every request unchanged
// and measures the GPU energy of each (src/proxy/proxy.h); a summary on exit.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "cli_parse.h"
#include "cli_util.h"
#include "commands.h"
#include "output_path.h"
#include "proxy/live_status.h"
#include "proxy/proxy.h"
#include "proxy/run_report.h"

namespace zeus::cli {
namespace {

std::atomic<bool> g_stop{false};
void request_stop(int) { g_stop.store(true); }

struct ProxyArgs {
  proxy::ProxyOptions options;
  std::string report_path;  // --report: the run as JSON, written on exit
};

// The run's report, written next to `path` and renamed into place.
void write_report(const std::filesystem::path& path, const proxy::RunReport& report) {
  const std::filesystem::path temp = path.string() + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream file(temp);
    file << proxy::run_report_json(report);
    if (!file.flush()) die("--report: cannot write " + temp.string());
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) die("--report: cannot write " + path.string() + ": " + ec.message());
}

void run_proxy(const ProxyArgs& args) {
  const proxy::ProxyOptions& options = args.options;
  std::filesystem::path report_path;
  if (!args.report_path.empty())
    report_path = value_or_die(output_file("--report", args.report_path));
  Devices devices = discover_or_die(true, false);
  if (devices.gpus.empty()) die("no GPU to measure: " + gpu_backend_reasons(devices));
  auto running = value_or_die(proxy::LlmProxy::start(devices, options), "zeus proxy");
  signal(SIGINT, request_stop);
  signal(SIGTERM, request_stop);
  // The first line names the port (tests start with --port 0 and read it from here).
  std::cout << "zeus proxy: serving http://" << options.host << ":" << running->port()
            << " in front of " << options.upstream << std::endl;
  {
    proxy::LiveStatus status_line([&] { return running->status(); }, STDERR_FILENO, 0.5);
    while (!g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    running->stop();
  }
  const proxy::RunReport report = running->report();
  std::cout << proxy::format_summary(report.summary) << std::flush;
  if (!report_path.empty()) write_report(report_path, report);
}

}  // namespace

void add_proxy_command(CLI::App& app) {
  auto args = std::make_shared<ProxyArgs>();
  proxy::ProxyOptions* options = &args->options;
  auto* cmd = app.add_subcommand(
      "proxy", "Measure the GPU energy of every request to an OpenAI-compatible server");
  cmd->add_option("--upstream", options->upstream,
                  "The inference server, e.g. http://127.0.0.1:8000")
      ->required();
  cmd->add_option("--port", options->port, "Port to listen on (default 8080; 0: any, printed)");
  cmd->add_option("--host", options->host, "Address to listen on (default 127.0.0.1)");
  add_parsed_option(
      *cmd, "--gpus", options->gpu_indices,
      [](const std::string& text) {
        return parse_int_list(text, "--gpus", "GPU indices like 0,1");
      },
      "The upstream's GPUs, e.g. 0,1 (default: all visible)")
      ->type_name("LIST");
  cmd->add_option("--log", options->log_path, "Append one JSON line per request to this file");
  cmd->add_option("--report", args->report_path,
                  "On exit, write the run as JSON: totals, the steady-state window, and each "
                  "request's attributed and steady-state energy");
  add_parsed_option(
      *cmd, "--max-body", options->max_body_bytes,
      [](const std::string& text) -> Result<size_t> {
        auto bytes = parse_count(text, "--max-body", 1, uint64_t{1} << 40);
        if (!bytes) return fail(bytes.error());
        return static_cast<size_t>(*bytes);
      },
      "Largest request body in bytes (default 16777216); a larger one is answered 413")
      ->type_name("BYTES");
  add_parsed_option(
      *cmd, "--interval", options->sample_interval_s,
      [](const std::string& text) { return parse_seconds(text, "--interval", {0.001}); },
      "Seconds between energy readings (default 0.1; also read at each request's end)")
      ->type_name("TIME");
  cmd->footer(
      "Answers gain X-Zeus-Energy-J and X-Zeus-Tokens (headers; HTTP trailers on streams).\n"
      "Send 'X-Zeus-Energy: 1' (or ?zeus=1) for usage.energy_j in JSON answers and a\n"
      "': zeus-energy-j=<J> tokens=<n>' line before a stream's 'data: [DONE]'.\n"
      "GET /metrics: the upstream's metrics, then the proxy's (zeus_proxy_*).\n"
      "On a terminal, stderr shows a live line: requests, tokens, J/token, W.\n"
      "Example:\n  zeus proxy --upstream http://127.0.0.1:8000 --port 8080 --gpus 0 --log "
      "req.jsonl");
  cmd->callback([args] { run_proxy(*args); });
}

}  // namespace zeus::cli
