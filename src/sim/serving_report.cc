// format_serving_table (zeus/sim_serving.h): the table `zeus simulate serving` prints.
#include <cstdio>
#include <string>

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
