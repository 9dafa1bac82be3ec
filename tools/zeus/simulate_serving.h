// `zeus simulate serving`: its options (simulate_serving_flags.cc) and run (simulate_serving.cc),
// called by cmd_simulate.cc.
#pragma once

#include <optional>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace zeus::cli {

struct ServingArgs {
  std::string trace;  // empty: the bundled conversation trace
  // The governor's knobs as given (checked by GovernorOptions::validate, as the proxy's are).
  std::optional<double> ttft_slo_s, tpot_slo_s;  // none: slo_margin x the maximum clock's p99
  double quantile = 0.99;
  double slo_margin = 1.5;
  double time_scale = 1.0;
  int replicas = 1;
  double wake_s = 0.5;  // the pack router's (RouterOptions::wake_s)
  std::string power_budget;        // "" none; watts, or "P%" of replicas x gpu_power_limit_w
  double gpu_power_limit_w = 700;
  int prefill_replicas = 0;    // P/D: of replicas, these only prefill
  double kv_transfer_us = 2;   // per prompt token
  std::string serving_profile;  // a calibrated profile (zeus proxy calibrate); empty: parametric
  std::string report_dir;       // --report: the report folder; empty: none
  std::string gnuplot;          // --gnuplot
};

// Adds the serving experiment's options to `zeus simulate` (simulate_serving_flags.cc); `args`
// must outlive the parse.
void add_serving_options(CLI::App& cmd, ServingArgs& args);

// Prints the table (or with json, one JSON object) of the four policies; exits on errors.
void run_simulate_serving(const ServingArgs& args, const std::string& data_dir, bool json);

}  // namespace zeus::cli
