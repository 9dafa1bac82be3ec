// `zeus simulate serving`'s options (simulate_serving.h): the trace, the governor's knobs, the
// replicas, the power budget. Each help starts "serving:", the rule by which `zeus simulate`
// refuses an option given to another experiment.
#include "cli_util.h"
#include "simulate_serving.h"

namespace zeus::cli {

void add_serving_options(CLI::App& cmd, ServingArgs& args) {
  cmd.add_option("--trace", args.trace,
                  "serving: a request trace CSV with Azure's columns TIMESTAMP, ContextTokens, "
                  "GeneratedTokens (default: DATA/llm_traces/azure_llm_2023_conv.csv; also "
                  "azure_llm_2023_code.csv)");
  // The governor's knobs: their ranges are GovernorOptions::validate's, checked in the run (the
  // same rule as zeus proxy --govern's).
  cmd.add_option_function<double>(
      "--ttft-slo", [&args](double s) { args.ttft_slo_s = s; },
      "serving: TTFT SLO in seconds (default: --slo-margin x the maximum clock's p99)");
  cmd.add_option_function<double>(
      "--tpot-slo", [&args](double s) { args.tpot_slo_s = s; },
      "serving: TPOT SLO in seconds (default: --slo-margin x the maximum clock's p99)");
  cmd.add_option("--slo-margin", args.slo_margin,
                  "serving: SLOs as this multiple of the maximum clock's own p99 (default 1.5)")
      ->check(CLI::Range(1.0, 100.0));
  cmd.add_option("--slo-quantile", args.quantile,
                  "serving: the quantile the governor holds under the SLOs, above 0.5 and below "
                  "1 (default 0.99)");
  cmd.add_option("--serving-profile", args.serving_profile,
                  "serving: a calibrated profile (zeus proxy calibrate --out FILE) instead of "
                  "the parametric model")
      ->type_name("FILE");
  cmd.add_option("--time-scale", args.time_scale,
                  "serving: arrivals compressed by this factor (2: twice the load; default 1)")
      ->check(CLI::Range(0.01, 100.0));
  cmd.add_option("--replicas", args.replicas,
                  "serving: replicas of the server, each its own GPUs and clock (default 1); "
                  "with more, every policy runs under least-loaded routing and the pack "
                  "router's policies (pack-max-clock, pack-best-static, pack-governor: the "
                  "fewest replicas that hold the SLOs serve, the others sleep) are added")
      ->check(CLI::Range(1, 256));
  cmd.add_option("--power-budget", args.power_budget,
                  "serving: a power budget over all replicas' GPUs, in watts or as a share of "
                  "their limit (60%: 0.6 x replicas x --gpu-power-limit); adds governor-budget "
                  "(clocks lowered under it) and governor-equal-caps (each GPU capped at budget "
                  "/ replicas), and the share of 1-s windows within it for every policy")
      ->type_name("W|P%");
  cmd.add_option("--gpu-power-limit", args.gpu_power_limit_w,
                  "serving: one GPU's power limit in watts, for --power-budget P% (default 700, "
                  "an H100 SXM's)")
      ->check(CLI::Range(1.0, 10000.0));
  cmd.add_option("--prefill-replicas", args.prefill_replicas,
                  "serving: prefill and decode apart (vLLM's and SGLang's P/D): this many of "
                  "--replicas only prefill, the rest only decode; adds pd-max-clock, "
                  "pd-best-static (a static clock per pool) and pd-governor")
      ->check(CLI::Range(0, 255));
  cmd.add_option("--kv-transfer-us", args.kv_transfer_us,
                  "serving: with --prefill-replicas, microseconds per prompt token for its KV "
                  "cache to reach the decode pool (default 2: ~128 KB a token over ~64 GB/s)")
      ->check(CLI::Range(0.0, 1000.0));
  cmd.add_option("--wake-s", args.wake_s,
                  "serving: seconds a sleeping replica takes to serve again under the pack "
                  "router (default 0.5: a clock raised; tens of seconds for an engine's sleep "
                  "mode)")
      ->check(CLI::Range(0.0, 600.0));
}

}  // namespace zeus::cli
