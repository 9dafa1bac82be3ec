// Paired-seed comparison of two configurations of the Zeus policy on every workload.
//
// For each workload and seed, Default, Zeus under rules A and Zeus under rules B replay the same
// seed (the same training-path stream), so the per-seed difference A − B removes the paths' luck
// that both share. Reported per metric: the mean over seeds of A and of B with their standard
// errors (sample standard deviation / √n), and the mean paired difference A − B with its standard
// error (of the per-seed differences): a difference is real when it is beyond about two of them.
// Metrics: cumulative energy ratio against Default, cumulative regret (J, against the expected
// cost of Oracle (expected)), last-five energy ratio against Default.
// Units: J. Deterministic in the options; seeds run on experiment.threads threads (0 = all cores).
// Thread-safety: no shared state; `progress` is called on the caller's thread.
// Failure: the trace and option errors of simulate().
//
//   CompareOptions o;  o.a = *parse_zeus_rules("zeus");  o.b = *parse_zeus_rules("upstream");
//   auto result = run_compare(o);
//   std::cout << format_compare_table(*result);
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/sim/sim_experiments.h"
#include "zeus/sim/sim_report.h"

namespace zeus::sim {

struct CompareOptions {
  // data, gpu, workloads, sim (eta, beta, seed, ...), seeds, progress, threads
  ExperimentOptions experiment;
  ZeusRules a, b;
  std::string a_label = "A", b_label = "B";
};

// Mean ± standard error of A and B and of their paired difference A − B.
struct PairedStat {
  double mean_a = 0.0, se_a = 0.0;
  double mean_b = 0.0, se_b = 0.0;
  double mean_diff = 0.0, se_diff = 0.0;
};
// a and b: one value per seed, same length (>= 1; with one seed every standard error is 0).
PairedStat paired_stat(std::span<const double> a, std::span<const double> b);

struct WorkloadComparison {
  std::string name;
  int recurrences = 0;
  PairedStat cum_energy_ratio;
  PairedStat cum_regret_j;
  PairedStat last5_energy_ratio;
};

struct CompareResult {
  std::string gpu;
  double eta = 0.0, beta = 0.0;
  int seeds = 0;
  std::string a_label, b_label, a_rules, b_rules;  // rules: zeus_rules_text()
  std::vector<WorkloadComparison> workloads;
  double mean_relative_regret_diff = 0.0;  // mean over workloads of (regret A − B) / regret B
};

Result<CompareResult> run_compare(const CompareOptions& options);
std::string format_compare_table(const CompareResult& result);
// The report: the table of every metric (mean ± SE of A and B, A − B ± SE) and compare.csv.
Result<std::filesystem::path> write_compare_report(const CompareResult& result, const std::filesystem::path& dir,
                                                   const ReportOptions& options);

}  // namespace zeus::sim
