#include "proxy/run_report.h"

#include <nlohmann/json.hpp>

namespace zeus::proxy {

std::string run_report_json(const RunReport& report) {
  using nlohmann::json;
  const SteadyState& steady = report.steady;
  json window = {{"found", steady.found},
                 {"why", steady.why},
                 {"requests", report.requests.size()},
                 {"max_concurrency", steady.max_concurrency},
                 {"start_s", steady.start_s},
                 {"end_s", steady.end_s},
                 {"duration_s", steady.end_s - steady.start_s},
                 {"energy_j", steady.energy_j},
                 {"tokens", steady.tokens},
                 {"energy_per_token_j", steady.j_per_token}};
  json results = json::array();
  for (size_t i = 0; i < report.requests.size(); ++i) {
    const FinishedRequest& r = report.requests[i];
    results.push_back({{"id", r.id},
                       {"model", r.model},
                       {"output_tokens", r.output_tokens},
                       {"energy_j", r.energy_j},
                       {"method", r.method},
                       {"window_tokens", steady.found && i < steady.request_window_tokens.size()
                                             ? steady.request_window_tokens[i]
                                             : 0.0},
                       {"steady_state_energy_j", steady.found && i < steady.request_energy_j.size()
                                                     ? json(steady.request_energy_j[i])
                                                     : json(nullptr)}});
  }
  const ProxySummary& s = report.summary;
  const json doc = {{"requests", s.requests},
                    {"output_tokens", s.output_tokens},
                    {"measured_j", s.measured_j},
                    {"attributed_j", s.attributed_j},
                    {"idle_j", s.idle_j},
                    {"steady_state", std::move(window)},
                    {"results_dropped", report.results_dropped},
                    {"results", std::move(results)}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace zeus::proxy
