// zeus proxy calibrate: the serving profile of this GPU and server for `zeus proxy --govern
// --serving-profile` (src/serving/live/calibrate.h; the fit in zeus/serving/serving_calibration.h).
#include <nlohmann/json.hpp>
#include <iostream>
#include <memory>

#include "cli_parse.h"
#include "cli_util.h"
#include "commands.h"
#include "output_path.h"
#include "serving/live/calibrate.h"
#include "serving_profile_file.h"

namespace zeus::cli {
namespace {

struct CalibrateArgs {
  proxy::CalibrateOptions options;
  std::string upstream, gpus, clocks, concurrency = "1,4,16";
  std::string out;
};

void run_calibrate(CalibrateArgs& args) {
  const std::filesystem::path out = value_or_die(output_file("--out", args.out));
  args.options.upstream =
      value_or_die(proxy::parse_upstream_url(args.upstream, "--upstream"), "zeus proxy calibrate");
  if (!args.gpus.empty()) {
    args.options.gpu_indices =
        value_or_die(parse_int_list(args.gpus, "--gpus", "GPU indices like 0,1"));
  }
  if (!args.clocks.empty()) {
    for (int mhz :
         value_or_die(parse_int_list(args.clocks, "--clocks", "SM clocks like 1980,1530"))) {
      args.options.clocks_mhz.push_back(static_cast<uint32_t>(mhz));
    }
  }
  args.options.concurrency =
      value_or_die(parse_int_list(args.concurrency, "--concurrency", "client counts like 1,4,16"));
  for (int c : args.options.concurrency) {
    if (c < 1 || c > 1024)
      die("--concurrency: each level must be 1-1024, not " + std::to_string(c));
  }
  Devices devices = discover_or_die(true, false);
  if (devices.gpus.empty()) die("no GPU to calibrate: " + gpu_backend_reasons(devices));
  std::cerr << "zeus proxy calibrate: sweeping the SM clock against " << args.options.upstream.text
            << " (" << args.options.concurrency.size() << " concurrency levels x "
            << args.options.seconds << " s per clock)" << std::endl;
  auto run = value_or_die(
      proxy::run_calibration(devices, args.options,
                             [](const std::string& line) { std::cerr << line << std::endl; }),
      "zeus proxy calibrate");
  Result<ServingProfile> fitted =
      fit_serving_profile(run.points, args.options.prompt_tokens, run.idle_w);
  if (!fitted) {
    // Minutes of locked-clock measurements are not thrown away: the points go beside --out.
    nlohmann::json points = nlohmann::json::parse(
        serving_profile_json(run, args.options, ServingProfile::parametric_h100()));
    points.erase("profile");
    points["format"] = "zeus-serving-points/1";
    points["fit_error"] = fitted.error().message;
    const std::string kept = out.string() + ".points.json";
    const bool saved = write_file_replacing(kept, points.dump(2) + "\n").has_value();
    die("zeus proxy calibrate: the fit: " + fitted.error().message +
        (saved ? "; the " + std::to_string(run.points.size()) + " measured points are in " + kept
               : ""));
  }
  const ServingProfile& profile = *fitted;
  const std::string text = serving_profile_json(run, args.options, profile);
  if (Result<void> written = write_file_replacing(out, text); !written) {
    die("--out: " + written.error().message);
  }
  std::printf(
      "zeus proxy calibrate: %zu points on %s (idle %.0f W); fitted: memory %.4f s + "
      "%.6f s per sequence per iteration, prefill %.7f s per token; power %.0f W + %.0f W "
      "x clock share; wrote %s (use: zeus proxy --govern --serving-profile %s)\n",
      run.points.size(), run.gpu_name.c_str(), run.idle_w, profile.memory_s,
      profile.decode_s_per_seq, profile.prefill_s_per_token, profile.base_w, profile.compute_w,
      out.c_str(), out.c_str());
}

}  // namespace

CLI::App* add_proxy_calibrate_command(CLI::App& proxy_command) {
  auto args = std::make_shared<CalibrateArgs>();
  auto* cmd = proxy_command.add_subcommand(
      "calibrate",
      "Measure the serving profile for --govern: sweep the SM clock against a running inference "
      "server with a synthetic streamed load");
  cmd->add_option("--upstream", args->upstream,
                  "The inference server, e.g. http://127.0.0.1:8000 (it must be serving)")
      ->required();
  cmd->add_option("--out", args->out, "Write the profile (JSON) here")->required();
  cmd->add_option("--gpus", args->gpus, "The server's GPUs, e.g. 0,1 (default: all visible)")
      ->type_name("LIST");
  cmd->add_option("--clocks", args->clocks,
                  "SM clocks to measure, e.g. 1980,1530,1080 (default: the GPU's clock ladder, "
                  "steps of about 7.5 % down to 45 % of the highest)")
      ->type_name("LIST");
  cmd->add_option("--concurrency", args->concurrency,
                  "Clients sending at once at each clock (default 1,4,16)")
      ->type_name("LIST");
  add_parsed_option(
      *cmd, "--seconds", args->options.seconds,
      [](const std::string& text) { return parse_seconds(text, "--seconds", {0.1}); },
      "Time per clock and concurrency (default 10s)")
      ->type_name("TIME");
  cmd->add_option("--prompt-tokens", args->options.prompt_tokens,
                  "Words in each synthetic prompt (about one token each; default 512)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--output-tokens", args->options.output_tokens,
                  "max_tokens of each request (default 128; ignore_eos is sent for vLLM)")
      ->check(CLI::Range(2, 1 << 20));
  cmd->add_option("--model", args->options.model, "The model name to send (default: none)");
  cmd->add_option("--path", args->options.path, "The completions route (default /v1/completions)");
  cmd->footer(
      "Each point: tokens/s, TTFT and TPOT (p50, p99), mean power and J/token; the clocks are\n"
      "restored at the end, on errors and on Ctrl-C (zeusd leases with ZEUSD_SOCK_PATH).\n"
      "Example:\n  zeus proxy calibrate --upstream http://127.0.0.1:8000 --gpus 0 --out "
      "serving.json\n"
      "  zeus proxy --upstream http://127.0.0.1:8000 --gpus 0 --govern --ttft-slo 2s "
      "--tpot-slo 100ms --serving-profile serving.json");
  cmd->callback([args] { run_calibrate(*args); });
  return cmd;
}

}  // namespace zeus::cli
