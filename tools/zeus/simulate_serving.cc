// zeus simulate serving (simulate_serving.h): Azure's LLM traces through the serving model under
// the four clock policies (zeus/serving/sim_serving.h); the table, or one JSON object with --json.
#include "simulate_serving.h"

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "governor_flags.h"
#include "serving_profile_file.h"
#include "zeus/serving/sim_serving.h"

namespace zeus::cli {

void run_simulate_serving(const ServingArgs& args, const std::string& data_dir, bool json) {
  const std::string path =
      args.trace.empty() ? (std::filesystem::path(data_dir) / "llm_traces" / "azure_llm_2023_conv.csv").string()
                         : args.trace;
  auto trace = sim::load_serving_trace(path);
  if (!trace) die(trace.error().message);
  sim::ServingSimOptions options;
  // The governor's knobs: the defaults and those given, checked by their one rule (the proxy's
  // too); then an SLO not given is 0, which the run derives from --slo-margin.
  GovernorOptions& knobs = options.governor;
  knobs = GovernorOptions{};
  knobs.quantile = args.quantile;
  if (args.ttft_slo_s) knobs.ttft_slo_s = *args.ttft_slo_s;
  if (args.tpot_slo_s) knobs.tpot_slo_s = *args.tpot_slo_s;
  governor_options_or_die(knobs);
  if (!args.ttft_slo_s) knobs.ttft_slo_s = 0;
  if (!args.tpot_slo_s) knobs.tpot_slo_s = 0;
  options.slo_margin = args.slo_margin;
  options.time_scale = args.time_scale;
  options.replicas = args.replicas;
  options.router.wake_s = args.wake_s;
  options.prefill_replicas = args.prefill_replicas;
  options.kv_transfer_s_per_token = args.kv_transfer_us * 1e-6;
  if (!args.power_budget.empty()) {
    // Watts, or a share of the GPUs' total limit ("60%").
    const std::string& text = args.power_budget;
    const bool share = text.back() == '%';
    const std::string number = share ? text.substr(0, text.size() - 1) : text;
    size_t used = 0;
    double value = 0;
    try {
      value = std::stod(number, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != number.size() || !(value > 0) || (share && value > 100)) {
      die("--power-budget '" + text + "': give watts (e.g. 1680) or a share of the GPUs' " +
          "limit from 1% to 100% (e.g. 60%)");
    }
    options.power_budget_w = share ? value / 100 * args.replicas * args.gpu_power_limit_w : value;
  }
  if (!args.serving_profile.empty()) {
    options.profile = value_or_die(read_serving_profile(args.serving_profile));
    options.profile_source = args.serving_profile;
  }
  auto result = sim::run_serving_experiment(*trace, options);
  if (!result) die(result.error().message);
  if (!args.report_dir.empty()) {
    auto written = sim::write_serving_report(*result, args.report_dir, args.gnuplot);
    if (!written) die("--report: " + written.error().message);
    std::cerr << "report: " << written->string() << "/index.md\n";
  }
  if (!json) {
    std::cout << sim::format_serving_table(*result);
    return;
  }
  nlohmann::json doc = {{"experiment", "serving"},
                        {"trace", result->trace},
                        {"requests", result->requests},
                        {"duration_s", result->duration_s},
                        {"output_tokens", result->output_tokens},
                        {"ttft_slo_s", result->ttft_slo_s},
                        {"tpot_slo_s", result->tpot_slo_s},
                        {"slo_quantile", result->quantile},
                        {"model", args.serving_profile.empty() ? "parametric" : "calibrated"},
                        {"replicas", result->replicas},
                        {"prefill_replicas", args.prefill_replicas},
                        {"power_budget_w", result->power_budget_w > 0
                                               ? nlohmann::json(result->power_budget_w)
                                               : nlohmann::json(nullptr)},
                        {"serving_profile", args.serving_profile.empty()
                                                ? nlohmann::json(nullptr)
                                                : nlohmann::json(args.serving_profile)},
                        {"policies", nlohmann::json::array()}};
  for (const sim::ServingPolicyResult& p : result->policies) {
    doc["policies"].push_back({{"name", p.name},
                               {"routing", p.routing},
                               {"replicas_awake_mean", p.mean_awake},
                               {"budget_held", p.budget_held >= 0 ? nlohmann::json(p.budget_held)
                                                                  : nlohmann::json(nullptr)},
                               {"peak_window_w", p.peak_window_w},
                               {"energy_j", p.energy_j},
                               {"j_per_token", p.j_per_token},
                               {"slo_violation_rate", p.slo_violation_rate},
                               {"ttft_violation_rate", p.ttft_violation_rate},
                               {"tpot_violation_rate", p.tpot_violation_rate},
                               {"ttft_p50_s", p.ttft_p50_s},
                               {"ttft_p99_s", p.ttft_p99_s},
                               {"tpot_p50_s", p.tpot_p50_s},
                               {"tpot_p99_s", p.tpot_p99_s},
                               {"mean_clock_mhz", p.mean_clock_mhz},
                               {"prefill_clock_mhz", p.prefill_clock_mhz > 0
                                                         ? nlohmann::json(p.prefill_clock_mhz)
                                                         : nlohmann::json(nullptr)},
                               {"static_clock_mhz", p.static_clock_mhz > 0 ? nlohmann::json(p.static_clock_mhz)
                                                                           : nlohmann::json(nullptr)}});
  }
  std::cout << doc.dump(2) << "\n";
}

}  // namespace zeus::cli
