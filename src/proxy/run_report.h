// A run of `zeus proxy` as one document (`--report FILE`, written on exit): the totals, the
// benchmark's steady-state window, and every finished request's attributed energy beside its
// steady-state figure (J/token x its output tokens), so the two methods can be compared request
// by request. Field names follow the ML.ENERGY benchmark's results.json where they mean the same.
// Pure: the report in, JSON text out.
//
//   RunReport report = proxy->report();
//   write_file(path, run_report_json(report));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "proxy/attribution.h"
#include "proxy/proxy.h"
#include "proxy/steady_state.h"

namespace zeus::proxy {

// One finished request, as the meter settled it.
struct FinishedRequest {
  RequestId id = 0;
  std::string model;
  int64_t output_tokens = 0;
  double energy_j = 0;  // attributed
  std::string method;   // of the attribution (attribution.h)
};

struct RunReport {
  ProxySummary summary;
  SteadyState steady;                     // request_energy_j in the order of `requests`
  std::vector<FinishedRequest> requests;  // the last ones kept, in the order they finished
  int64_t results_dropped = 0;            // earlier finished requests no longer kept
};

// {"requests", "output_tokens", "measured_j", "attributed_j", "idle_j",
//  "steady_state": {"found", "why", "requests", "max_concurrency", "start_s", "end_s",
//                   "duration_s", "energy_j", "tokens", "energy_per_token_j"},
//  "results_dropped",
//  "results": [{"id", "model", "output_tokens", "energy_j", "method", "window_tokens",
//               "steady_state_energy_j"}]}
// steady_state.requests: the requests the method ran over (those in results); results_dropped:
// the earlier ones, no longer kept (RunWindow's bound). window_tokens: the tokens the request
// produced inside the window (0 without one), so sum(window_tokens) x energy_per_token_j = the
// window's energy; steady_state_energy_j is null when no window was found.
std::string run_report_json(const RunReport& report);

}  // namespace zeus::proxy
