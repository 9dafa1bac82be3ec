// zeus proxy: in front of an OpenAI-compatible inference server, forwards every request unchanged
// and measures the GPU energy of each (src/proxy/proxy.h); a summary on exit.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "cli_parse.h"
#include "cli_util.h"
#include "colosseum/colosseum.h"
#include "commands.h"
#include "governor_flags.h"
#include "output_path.h"
#include "proxy/live_status.h"
#include "proxy/proxy.h"
#include "proxy/run_report.h"
#include "serving_profile_file.h"
#include "zeus/common/log.h"

namespace zeus::cli {
namespace {

std::atomic<bool> g_proxy_stop{false};
void request_proxy_stop(int) { g_proxy_stop.store(true); }

// The run's report, written next to `path` and renamed into place.
void write_report(const std::filesystem::path& path, const proxy::RunReport& report) {
  if (Result<void> written = write_file_replacing(path, proxy::run_report_json(report)); !written) {
    die("--report: " + written.error().message);
  }
}

Devices gpus_or_die() {
  Devices devices = discover_or_die(true, false);
  if (devices.gpus.empty()) die("no GPU to measure: " + gpu_backend_reasons(devices));
  return devices;
}

// Prints `serving` (the first line names the port: tests start with --port 0 and read it from
// here), then waits for Ctrl-C or SIGTERM.
void serve_until_signal(const std::string& serving) {
  signal(SIGINT, request_proxy_stop);
  signal(SIGTERM, request_proxy_stop);
  std::cout << serving << std::endl;
  while (!g_proxy_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

// The governor's exit lines: what it did (measured), then the saving, which is an estimate
// and says so, from what, and how to measure it.
void print_governor_summary(const proxy::ProxyStatus& s, const proxy::ProxySummary& summary) {
  std::printf(
      "zeus proxy --govern: %lld clock changes, last %.0f MHz (max %.0f); %.2f %% of %lld "
      "streamed requests within the SLOs; clocks restored\n",
      static_cast<long long>(s.clock_changes), s.clock_mhz, s.max_clock_mhz, 100 * s.slo_attainment,
      static_cast<long long>(s.slo_requests));
  if (s.clock_changes > 0) {
    const double share =
        summary.measured_j > 0 ? 100 * s.energy_saved_j / (summary.measured_j + s.energy_saved_j)
                               : 0;
    std::printf("zeus proxy --govern: estimated saving against the maximum clock: about %.0f J "
                "(%.1f %%), an ESTIMATE from %s, not a measurement. To measure it, replay the same "
                "load without --govern and compare the two \"J measured\" lines "
                "(docs/proxy.md, \"Measuring what --govern saves\")\n",
                s.energy_saved_j, share, s.energy_saved_source.c_str());
  }
  std::fflush(stdout);
}

// The proxy; on a terminal, stderr shows a live line while it serves.
void run_proxy(const proxy::ProxyOptions& options, const std::string& report_arg) {
  std::filesystem::path report_path;
  if (!report_arg.empty()) report_path = value_or_die(output_file("--report", report_arg));
  Devices devices = gpus_or_die();
  auto running = value_or_die(proxy::LlmProxy::start(devices, options), "zeus proxy");
  if (options.govern.enabled) {
    std::cerr << "zeus proxy --govern: the load comes from " << running->status().governor_load
              << "\n";
  }
  {
    proxy::LiveStatus status_line([&] { return running->status(); }, STDERR_FILENO, 0.5);
    serve_until_signal("zeus proxy: serving http://" + options.host + ":" +
                       std::to_string(running->port()) + " in front of " + options.upstream.text);
    running->stop();
  }
  const proxy::RunReport report = running->report();
  std::cout << proxy::format_summary(report.summary) << std::flush;
  if (options.govern.enabled) print_governor_summary(running->status(), report.summary);
  if (!report_path.empty()) write_report(report_path, report);
}

// What the command line gives: one upstream (the proxy) or two named ones (the Colosseum).
struct ProxyArgs {
  proxy::ProxyOptions proxy;
  std::vector<std::string> upstreams;  // "URL" or "NAME=URL"
  std::vector<std::string> gpus;       // "LIST" or "NAME=LIST"
  std::string votes_path;
  std::string duel_log_path;  // --colosseum-log
  int max_tokens = 512;
  std::string report_path;  // --report: the proxy's run as JSON, written on exit
  std::string serving_profile;  // --serving-profile
  std::vector<CLI::Option*> govern_only;  // the governor's options: refused without --govern
};

void run_colosseum(const ProxyArgs& args) {
  if (!args.report_path.empty()) die("--report: only the proxy (one --upstream) writes a report");
  if (args.proxy.govern.enabled) die("--govern: only the proxy (one --upstream) governs clocks");
  proxy::ColosseumOptions options;
  for (size_t i = 0; i < 2; ++i) {
    auto named = value_or_die(parse_named_value(args.upstreams[i], "--upstream", "=http"));
    if (named.name.empty()) {
      die("--upstream: the Colosseum's two upstreams need names, e.g. --upstream "
          "llama=http://127.0.0.1:8000 --upstream mistral=http://127.0.0.1:8001");
    }
    options.sides[i].name = named.name;
    options.sides[i].url = value_or_die(
        proxy::parse_upstream_url(named.value, "--upstream " + named.name + "=..."), "zeus proxy");
  }
  for (const std::string& text : args.gpus) {
    auto named = value_or_die(parse_named_value(text, "--gpus", "="));
    auto list = value_or_die(parse_int_list(named.value, "--gpus", "GPU indices like a=0,1"));
    bool found = false;
    for (auto& side : options.sides) {
      if (named.name.empty() || named.name == side.name) {
        side.gpu_indices = list;
        found = true;
      }
    }
    if (!found) {
      die("--gpus '" + text + "': no upstream is named '" + named.name + "' (the names are " +
          options.sides[0].name + " and " + options.sides[1].name + ")");
    }
  }
  options.host = args.proxy.host;
  options.port = args.proxy.port;
  options.sample_interval_s = args.proxy.sample_interval_s;
  options.upstream_timeout_s = args.proxy.upstream_timeout_s;
  options.steady_state_window = args.proxy.steady_state_window;
  options.max_tokens = args.max_tokens;
  options.log_path = args.proxy.log_path;
  if (!args.votes_path.empty()) options.votes_path = args.votes_path;
  options.duel_log_path = args.duel_log_path;
  Devices devices = gpus_or_die();
  auto running = value_or_die(proxy::Colosseum::start(devices, options), "zeus proxy");
  serve_until_signal("zeus proxy: serving http://" + options.host + ":" +
                     std::to_string(running->port()) + " (Colosseum: " + options.sides[0].name +
                     " at " + options.sides[0].url.text + " vs " + options.sides[1].name +
                     " at " + options.sides[1].url.text + ")");
  running->stop();
  for (const proxy::ProxySummary& s : running->summaries()) {
    std::cout << proxy::format_summary(s) << std::flush;
  }
}

void run(ProxyArgs& args) {
  if (args.upstreams.empty()) {
    die("--upstream is required: the inference server, e.g. --upstream http://127.0.0.1:8000 "
        "(see zeus proxy --help)");
  }
  if (!args.proxy.govern.enabled) {
    for (const CLI::Option* option : args.govern_only) {
      if (option->count() > 0) {
        die(option->get_name() +
            ": only with --govern (without it the proxy measures and never moves the clock)");
      }
    }
  }
  // The governor's knobs, by their one rule (the simulator's too); a missing SLO is refused by
  // LlmProxy::start ("--govern needs both SLOs").
  const GovernorOptions& knobs = args.proxy.govern.governor;
  if (args.proxy.govern.enabled && knobs.ttft_slo_s != 0 && knobs.tpot_slo_s != 0) {
    governor_options_or_die(knobs);
  }
  if (!args.serving_profile.empty()) {
    if (!args.proxy.govern.enabled) die("--serving-profile: only with --govern");
    args.proxy.govern.profile = value_or_die(read_serving_profile(args.serving_profile));
    args.proxy.govern.has_profile = true;
    args.proxy.govern.profile_source = args.serving_profile;
  }
  if (args.upstreams.size() == 2) return run_colosseum(args);
  if (args.upstreams.size() != 1) {
    die("--upstream: give one inference server (the proxy) or two named ones (the Colosseum), "
        "not " +
        std::to_string(args.upstreams.size()));
  }
  if (!args.votes_path.empty()) die("--votes: only the Colosseum (two --upstream) has votes");
  if (!args.duel_log_path.empty()) {
    die("--colosseum-log: only the Colosseum (two --upstream) has duels; --log logs requests");
  }
  auto named = value_or_die(parse_named_value(args.upstreams[0], "--upstream", "=http"));
  args.proxy.upstream =
      value_or_die(proxy::parse_upstream_url(named.value, "--upstream"), "zeus proxy");
  if (args.gpus.size() > 1) die("--gpus: give it once with one upstream");
  if (!args.gpus.empty()) {
    args.proxy.gpu_indices =
        value_or_die(parse_int_list(args.gpus[0], "--gpus", "GPU indices like 0,1"));
  }
  run_proxy(args.proxy, args.report_path);
}

}  // namespace

void add_proxy_command(CLI::App& app) {
  auto args = std::make_shared<ProxyArgs>();
  proxy::ProxyOptions* options = &args->proxy;
  auto* cmd = app.add_subcommand(
      "proxy", "Measure the GPU energy of every request to an OpenAI-compatible server");
  cmd->add_option("--upstream", args->upstreams,
                  "The inference server, e.g. http://127.0.0.1:8000 (a path in it goes before "
                  "every request's); twice, named (NAME=URL, NAME sent as the model), for the "
                  "Colosseum")
      ->allow_extra_args(false);
  cmd->add_option("--port", options->port, "Port to listen on (default 8080; 0: any, printed)");
  cmd->add_option("--host", options->host, "Address to listen on (default 127.0.0.1)");
  cmd->add_option("--gpus", args->gpus,
                  "The upstream's GPUs, e.g. 0,1 (default: all visible); NAME=LIST per "
                  "Colosseum upstream, e.g. --gpus a=0 --gpus b=1")
      ->type_name("LIST")
      ->allow_extra_args(false);
  cmd->add_option("--votes", args->votes_path,
                  "Colosseum: keep the votes in this SQLite file (default: in memory)");
  cmd->add_option("--colosseum-log", args->duel_log_path,
                  "Colosseum: append each duel's state changes, refused steps and expiries to "
                  "this file, one JSON line each (default: none)")
      ->type_name("FILE");
  cmd->add_option("--max-tokens", args->max_tokens,
                  "Colosseum: the most tokens per answer (default 512)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--log", options->log_path, "Append one JSON line per request to this file");
  cmd->add_option("--report", args->report_path,
                  "On exit, write the run as JSON: totals, the steady-state window, and each "
                  "request's attributed and steady-state energy");
  cmd->add_option("--steady-state-window", options->steady_state_window,
                  "The steady-state method and --report cover the last N finished requests "
                  "(default 10000; memory about 8 bytes per output token of those)")
      ->type_name("N")
      ->check(CLI::Range(size_t{1}, size_t{100000000}));
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
  cmd->add_option("--io-threads", options->io_threads,
                  "Event-loop threads relaying requests (default 1, the fastest per request on a "
                  "small machine; more for many clients on a many-core host)")
      ->type_name("N")
      ->check(CLI::Range(1, 64));
  add_parsed_option(
      *cmd, "--upstream-timeout", options->upstream_timeout_s,
      [](const std::string& text) -> Result<double> {
        auto s = parse_seconds(text, "--upstream-timeout", {0.1});
        if (s && *s > 86400) {
          return fail(ErrorCode::kInvalidArgument,
                      "--upstream-timeout '" + text + "': at most a day (86400 s)");
        }
        return s;
      },
      "Seconds to wait for the upstream's answer to begin, and between two of its pieces "
      "(default 600); past that the client gets 502, or its stream ends cut")
      ->type_name("TIME");
  cmd->add_flag("--govern", options->govern.enabled,
                "Save energy: lock the GPUs' SM clock at the lowest that keeps --ttft-slo and "
                "--tpot-slo (docs/proxy.md, \"Saving energy\"); clocks restored on exit; through "
                "zeusd when ZEUSD_SOCK_PATH is set");
  args->govern_only.push_back(
      add_parsed_option(
          *cmd, "--ttft-slo", options->govern.governor.ttft_slo_s,
          [](const std::string& text) { return parse_seconds(text, "--ttft-slo", {0.001}); },
          "--govern: time to first token that the --slo-quantile of streamed requests must meet, "
          "e.g. 2s")
          ->type_name("TIME"));
  args->govern_only.push_back(
      add_parsed_option(
          *cmd, "--tpot-slo", options->govern.governor.tpot_slo_s,
          [](const std::string& text) { return parse_seconds(text, "--tpot-slo", {0.0001}); },
          "--govern: time per output token after the first, e.g. 100ms")
          ->type_name("TIME"));
  // Its range (above 0.5, below 1) is GovernorOptions::validate's, checked in run().
  args->govern_only.push_back(
      add_parsed_option(
          *cmd, "--slo-quantile", options->govern.governor.quantile,
          [](const std::string& text) { return parse_number(text, "--slo-quantile"); },
          "--govern: the quantile the SLOs bound, above 0.5 and below 1 (default 0.99)")
          ->type_name("Q"));
  cmd->add_option("--serving-profile", args->serving_profile,
                  "--govern: start from this GPU's profile (zeus proxy calibrate --out FILE) "
                  "instead of the parametric model")
      ->type_name("FILE");
  args->govern_only.push_back(
      add_parsed_option(
          *cmd, "--govern-period", options->govern.period_s,
          [](const std::string& text) { return parse_seconds(text, "--govern-period", {0.05}); },
          "--govern: time between two decisions (default 0.5s)")
          ->type_name("TIME"));
  args->govern_only.push_back(
      cmd->add_option("--engine-metrics", options->govern.engine_metrics,
                      "--govern: where the engine's own load is read (its requests running and "
                      "waiting, which include those that bypass the proxy): auto (default: the "
                      "upstream's /metrics; vLLM, SGLang, TGI, llama.cpp), off, or a URL")
          ->type_name("auto|off|URL"));
  cmd->footer(
      "Answers gain X-Zeus-Energy-J and X-Zeus-Tokens (headers; HTTP trailers on streams).\n"
      "Send 'X-Zeus-Energy: 1' (or ?zeus=1) for usage.energy_j in JSON answers and a\n"
      "': zeus-energy-j=<J> tokens=<n>' line before a stream's 'data: [DONE]'.\n"
      "The live page is /zeus/. Two named upstreams make the Colosseum (/zeus/colosseum).\n"
      "GET /metrics: the upstream's metrics, then the proxy's (zeus_proxy_*).\n"
      "On a terminal, stderr shows a live line: requests, tokens, J/token, W.\n"
      "Examples:\n  zeus proxy --upstream http://127.0.0.1:8000 --port 8080 --gpus 0 --log "
      "req.jsonl\n"
      "  zeus proxy --upstream http://127.0.0.1:8000 --gpus 0 --govern --ttft-slo 2s "
      "--tpot-slo 100ms\n"
      "  zeus proxy --upstream llama=http://127.0.0.1:8000 --gpus llama=0 \\\n"
      "             --upstream qwen=http://127.0.0.1:8001 --gpus qwen=1 --votes votes.db");
  CLI::App* calibrate = add_proxy_calibrate_command(*cmd);
  cmd->callback([args, calibrate] {
    if (!calibrate->parsed()) run(*args);
  });
}

}  // namespace zeus::cli
