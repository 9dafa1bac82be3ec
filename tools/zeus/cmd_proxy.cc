// zeus proxy: in front of an OpenAI-compatible inference server, forwards every request unchanged
// and measures the GPU energy of each (src/proxy/proxy.h); a summary on exit.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <thread>

#include "cli_parse.h"
#include "cli_util.h"
#include "commands.h"
#include "proxy/proxy.h"

namespace zeus::cli {
namespace {

std::atomic<bool> g_stop{false};
void request_stop(int) { g_stop.store(true); }

void run_proxy(const proxy::ProxyOptions& options) {
  Devices devices = discover_or_die(true, false);
  if (devices.gpus.empty()) die("no GPU to measure: " + gpu_backend_reasons(devices));
  auto running = value_or_die(proxy::LlmProxy::start(devices, options), "zeus proxy");
  signal(SIGINT, request_stop);
  signal(SIGTERM, request_stop);
  // The first line names the port (tests start with --port 0 and read it from here).
  std::cout << "zeus proxy: serving http://" << options.host << ":" << running->port()
            << " in front of " << options.upstream << std::endl;
  while (!g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  running->stop();
  std::cout << proxy::format_summary(running->summary()) << std::flush;
}

}  // namespace

void add_proxy_command(CLI::App& app) {
  auto options = std::make_shared<proxy::ProxyOptions>();
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
  add_parsed_option(
      *cmd, "--interval", options->sample_interval_s,
      [](const std::string& text) { return parse_seconds(text, "--interval", {0.001}); },
      "Seconds between energy readings (default 0.1; also read at each request's start and end)")
      ->type_name("TIME");
  cmd->footer(
      "Answers gain X-Zeus-Energy-J and X-Zeus-Tokens (headers; HTTP trailers on streams).\n"
      "Send 'X-Zeus-Energy: 1' (or ?zeus=1) for usage.energy_j in JSON answers and a\n"
      "': zeus-energy-j=<J> tokens=<n>' line before a stream's 'data: [DONE]'.\n"
      "Example:\n  zeus proxy --upstream http://127.0.0.1:8000 --port 8080 --gpus 0 --log "
      "req.jsonl");
  cmd->callback([options] { run_proxy(*options); });
}

}  // namespace zeus::cli
