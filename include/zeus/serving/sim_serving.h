// `zeus simulate serving`: a request trace (Azure's LLM inference traces: arrival time, prompt
// tokens, output tokens) replayed through a model of a continuously batching inference server
// under a GPU clock policy, for the energy, J/token, TTFT/TPOT quantiles and SLO attainment of
// each policy: the maximum clock (what a server runs at by default), the best static clock (an
// oracle that knows the trace: the lowest-energy clock whose SLO violations stay within one
// percentage point of the maximum clock's), a reactive dual loop in the style of GreenLLM (TPOT
// slack steps the clock; TTFT or queue pressure jumps to the maximum), and the governor
// (zeus/serving/serving_governor.h, the code `zeus proxy` runs).
//
// The server: each iteration, every running request emits one token and waiting prompts are
// prefilled in chunks up to a token budget (chunked prefill, FIFO), at most max_batch requests
// at once; a request's first token comes with the iteration that ends its prefill. An
// iteration's time and power come from a ServingProfile at the clock in force; the server idles
// at idle_w between requests. A policy is asked every control_period_s with what a proxy would
// have seen over that period.
// The SLOs default to the maximum-clock run's own p99 TTFT and TPOT times slo_margin.
// Pure apart from load_serving_trace (reads the file). Failure: InvalidArgument naming the file,
// line and column, or the option (the governor's by GovernorOptions::validate).
//
//   auto trace = load_serving_trace("data/llm_traces/azure_llm_2023_conv.csv");
//   auto result = run_serving_experiment(*trace, ServingSimOptions{});
//
// Where it lives: src/serving/simulation/ of the serving wing (docs/architecture.md, "The
// serving wing"): serving_trace.cc, serving_sim.cc, serving_report.cc, in libzeus; it includes
// the wing's governor (this header's zeus/serving/serving_governor.h) and sim/'s report writers,
// never
// the live loop.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/serving/replica_router.h"
#include "zeus/serving/serving_governor.h"

namespace zeus::sim {

struct ServingRequest {
  double arrival_s = 0;  // from the trace's first request
  int prompt_tokens = 0;
  int output_tokens = 1;
};

struct ServingTrace {
  std::string name;  // the file's stem
  std::vector<ServingRequest> requests;
};

// A CSV with the Azure columns TIMESTAMP (YYYY-MM-DD HH:MM:SS[.fffffff]), ContextTokens and
// GeneratedTokens (any order, other columns ignored); arrivals sorted.
Result<ServingTrace> load_serving_trace(const std::string& path);

struct ServingSimOptions {
  ServingProfile profile = ServingProfile::parametric_h100();
  double control_period_s = 0.5;
  int max_batch = 256;
  int prefill_chunk_tokens = 2048;  // prompt tokens per iteration at most (vLLM's chunked prefill)
  double slo_margin = 1.5;          // an SLO not given = margin x the maximum clock's p99
  double time_scale = 1.0;          // arrivals compressed by this factor (> 1: more load)
  // The governor's knobs (GovernorOptions::validate checks them), SLOs and quantile included;
  // the dual loop holds the same SLOs and quantile. An SLO of 0 is not given: the run derives it
  // (slo_margin x the maximum clock's p99) and writes it here, in its copy, before the other
  // policies run. Any other SLO is given, and checked.
  GovernorOptions governor = {.ttft_slo_s = 0, .tpot_slo_s = 0};
  // What `profile` is, for the table's note: "parametric" or where a calibrated one came from.
  std::string profile_source = "parametric";
  // Replicas of the server (1 to ReplicaRouter::kMaxReplicas), each its own GPUs and clock. With
  // more than one, each policy runs under least-loaded routing, and the pack router's policies
  // (pack-max-clock, pack-best-static, pack-governor) are added. `router`'s policy is ignored
  // (both run); its other knobs are the pack router's.
  int replicas = 1;
  RouterOptions router;
  // A power budget over all replicas' GPUs (W; 0: none). Given, two policies are added:
  // governor-budget (the governors' clocks lowered under the budget, zeus/serving/power_budget.h)
  // and governor-equal-caps (the same governors, each GPU capped at budget / replicas by its
  // firmware, per iteration), and every policy reports the share of 1-s windows within it.
  double power_budget_w = 0;
  // Prefill and decode apart (vLLM's and SGLang's P/D): with 1 to replicas - 1 prefill replicas,
  // the policies pd-max-clock, pd-best-static (the best pair of static clocks, one per pool) and
  // pd-governor (a governor per replica: the prefill pool's TTFT-bound, the decode pool's
  // TPOT-bound) are added: requests arrive at the prefill pool, and each prompt's KV cache
  // reaches the decode pool kv_transfer_s_per_token x its tokens after its first token.
  int prefill_replicas = 0;
  double kv_transfer_s_per_token = 2e-6;  // 0 to 1 ms a token
};

struct ServingPolicyResult {
  // "max-clock", "best-static", "dual-loop", "governor"; with replicas also "pack-max-clock",
  // "pack-best-static", "pack-governor" (the pack router with that clock policy per replica)
  // with a power budget "governor-budget", "governor-equal-caps", and with prefill replicas
  // "pd-max-clock", "pd-best-static", "pd-governor"
  std::string name;
  std::string routing = "least-loaded";  // or "pack", or "prefill-decode"
  double prefill_clock_mhz = 0;          // pd-best-static: the prefill pool's clock
  double energy_j = 0;
  double j_per_token = 0;     // energy over output tokens
  double ttft_p50_s = 0, ttft_p99_s = 0;
  double tpot_p50_s = 0, tpot_p99_s = 0;
  double slo_violation_rate = 0;  // requests over either SLO, 0-1
  double ttft_violation_rate = 0, tpot_violation_rate = 0;  // over each SLO, 0-1
  double mean_clock_mhz = 0;      // time-weighted
  double static_clock_mhz = 0;    // best-static: its clock
  double mean_awake = 1;           // replicas not asleep, time-weighted
  // With a power budget: the share of whole seconds whose mean power (all GPUs) stayed within
  // it, and the highest such second's (W); -1 and 0 without a budget.
  double budget_held = -1;
  double peak_window_w = 0;
  std::vector<std::pair<double, double>> clock_timeline;  // (s, mean MHz over replicas) at each change
  std::vector<std::pair<double, double>> load_timeline;   // (s, running requests) per period
  std::vector<std::pair<double, double>> awake_timeline;  // (s, replicas awake) at each change
};

struct ServingExperiment {
  std::string trace;
  int requests = 0;
  double duration_s = 0;
  long long output_tokens = 0;
  double ttft_slo_s = 0, tpot_slo_s = 0, quantile = 0.99;
  std::string profile_source = "parametric";  // the options'
  int replicas = 1;
  double power_budget_w = 0;  // the options' (0: none)
  std::vector<ServingPolicyResult> policies;  // max-clock, best-static, dual-loop, governor[, pack-*]
};

Result<ServingExperiment> run_serving_experiment(const ServingTrace& trace,
                                                 const ServingSimOptions& options);

// The table `zeus simulate serving` prints.
std::string format_serving_table(const ServingExperiment& experiment);

// `zeus simulate serving --report DIR`: the table, energy and violations per policy, and the
// clock and the load over time (serving_report.cc; ReportWriter, gnuplot as in sim_report.h:
// "" = found on PATH, "none" = scripts only). Every caption says which profile the server is.
Result<std::filesystem::path> write_serving_report(const ServingExperiment& experiment,
                                                   const std::filesystem::path& dir,
                                                   const std::string& gnuplot);

}  // namespace zeus::sim
