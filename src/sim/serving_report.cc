// format_serving_table and write_serving_report (zeus/sim_serving.h): the table `zeus simulate
// serving` prints and its --report.
#include <algorithm>
#include <cstdio>
#include <string>

#include "sim/report_writer.h"
#include "zeus/sim_serving.h"

namespace zeus::sim {

std::string format_serving_table(const ServingExperiment& e) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line,
                "trace %s: %d requests over %.0f s, %lld output tokens; SLOs: TTFT %.3f s, TPOT "
                "%.4f s at p%.0f\n",
                e.trace.c_str(), e.requests, e.duration_s, e.output_tokens, e.ttft_slo_s,
                e.tpot_slo_s, e.quantile * 100);
  out += line;
  std::snprintf(line, sizeof line, "%-12s %12s %9s %9s %8s %9s %9s %9s %9s %10s %8s\n", "policy",
                "energy (kJ)", "vs max", "J/token", "clock", "TTFT p50", "TTFT p99", "TPOT p50",
                "TPOT p99", "violations", "vs max");
  out += line;
  const ServingPolicyResult* max = e.policies.empty() ? nullptr : &e.policies.front();
  for (const ServingPolicyResult& p : e.policies) {
    const double saved = max && max->energy_j > 0 ? 100.0 * (p.energy_j / max->energy_j - 1) : 0;
    const double extra = max ? 100.0 * (p.slo_violation_rate - max->slo_violation_rate) : 0;
    char clock[32];
    if (p.static_clock_mhz > 0) {
      std::snprintf(clock, sizeof clock, "%.0f", p.static_clock_mhz);
    } else {
      std::snprintf(clock, sizeof clock, "~%.0f", p.mean_clock_mhz);
    }
    std::snprintf(line, sizeof line,
                  "%-12s %12.1f %8.1f%% %9.3f %8s %9.3f %9.3f %9.4f %9.4f %9.2f%% %+7.2fpp\n",
                  p.name.c_str(), p.energy_j / 1000, saved, p.j_per_token, clock, p.ttft_p50_s,
                  p.ttft_p99_s, p.tpot_p50_s, p.tpot_p99_s, 100 * p.slo_violation_rate, extra);
    out += line;
  }
  out += "clock: the static clock, or ~ the time-weighted mean (MHz). The server and its power are ";
  out += e.profile_source == "parametric"
             ? "the parametric model (docs/proxy.md, \"Saving energy\"), not a measurement.\n"
             : "the serving profile calibrated in " + e.profile_source + ".\n";
  return out;
}

}  // namespace zeus::sim

namespace zeus::sim {
namespace {

// The value of a step function given at its change points at time t (the first before t).
double at(const std::vector<std::pair<double, double>>& steps, double t, double before) {
  double value = before;
  for (const auto& [when, v] : steps) {
    if (when > t) break;
    value = v;
  }
  return value;
}

}  // namespace

Result<std::filesystem::path> write_serving_report(const ServingExperiment& e,
                                                   const std::filesystem::path& dir,
                                                   const std::string& gnuplot) {
  if (e.policies.empty()) return fail(ErrorCode::kInvalidArgument, "no policy to report");
  auto created = ReportWriter::create(dir, gnuplot);
  if (!created) return fail(created.error());
  ReportWriter& report = *created;
  const std::string model =
      e.profile_source == "parametric"
          ? "the parametric serving model (docs/proxy.md, \"Saving energy\"), not a measurement"
          : "the serving profile calibrated in " + e.profile_source;
  report.paragraph("Trace " + e.trace + ": " + std::to_string(e.requests) + " requests over " +
                   fixed(e.duration_s, 0) + " s, " + std::to_string(e.output_tokens) +
                   " output tokens, replayed through a continuously batching server under four "
                   "SM clock policies. SLOs: TTFT " + fixed(e.ttft_slo_s, 3) + " s, TPOT " +
                   fixed(e.tpot_slo_s, 4) + " s at p" + fixed(100 * e.quantile, 0) +
                   "; a violation is a request over either. The server and its power: " + model +
                   ".");
  const ServingPolicyResult& max = e.policies.front();
  std::vector<std::vector<std::string>> rows, energy_rows, violation_rows;
  for (const ServingPolicyResult& p : e.policies) {
    rows.push_back({p.name, fixed(p.energy_j / 1000, 1),
                    fixed(100 * (p.energy_j / max.energy_j - 1), 1), fixed(p.j_per_token, 3),
                    p.static_clock_mhz > 0 ? fixed(p.static_clock_mhz, 0)
                                           : "~" + fixed(p.mean_clock_mhz, 0),
                    fixed(p.ttft_p99_s, 3), fixed(p.tpot_p99_s, 4),
                    fixed(100 * p.slo_violation_rate, 2)});
    energy_rows.push_back({p.name, fixed(p.energy_j / 1000, 3)});
    violation_rows.push_back({p.name, fixed(100 * p.slo_violation_rate, 3)});
  }
  report.heading("Energy and SLO attainment per policy");
  report.table({"policy", "energy (kJ)", "vs max clock (%)", "J/token", "clock (MHz)",
                "TTFT p99 (s)", "TPOT p99 (s)", "violations (%)"},
               rows);
  ZEUS_TRY(report.bar_chart("serving_energy", {"policy", "energy (kJ)"}, energy_rows,
                            "GPU energy per policy (" + model + ")", "kJ"));
  ZEUS_TRY(report.bar_chart("serving_violations", {"policy", "violations (%)"}, violation_rows,
                            "Requests over an SLO (" + model + ")", "% of requests"));
  // Clock and load over time, sampled every 10 s of the trace (the CSVs hold the samples).
  report.heading("The clock and the load over time");
  const double step = std::max(1.0, e.duration_s / 400);
  std::vector<std::string> clock_header = {"time (s)"};
  for (const ServingPolicyResult& p : e.policies) clock_header.push_back(p.name);
  std::vector<std::vector<std::string>> clock_rows, load_rows;
  for (double t = 0; t <= e.duration_s; t += step) {
    std::vector<std::string> row = {fixed(t, 0)};
    for (const ServingPolicyResult& p : e.policies) {
      const double start = p.static_clock_mhz > 0 ? p.static_clock_mhz : p.mean_clock_mhz;
      row.push_back(fixed(at(p.clock_timeline, t, start), 0));
    }
    clock_rows.push_back(std::move(row));
    const ServingPolicyResult& governor = e.policies.back();
    load_rows.push_back({fixed(t, 0), fixed(at(governor.load_timeline, t, 0), 0)});
  }
  ZEUS_TRY(report.line_chart("serving_clock", clock_header, clock_rows,
                             "SM clock over time (" + model + ")", "time in the trace (s)",
                             "SM clock (MHz)"));
  ZEUS_TRY(report.line_chart("serving_load", {"time (s)", "running requests (governor)"},
                             load_rows, "Requests running over time (" + model + ")",
                             "time in the trace (s)", "requests"));
  return report.finish("zeus simulate serving: " + e.trace);
}

}  // namespace zeus::sim
