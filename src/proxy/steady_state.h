// The ML.ENERGY benchmark's steady-state method, beside the per-request attribution: over a run,
// the window from the moment B requests have had their first token to the moment N - B - 1 have
// finished (N requests, B the largest number in flight at once), the GPU energy in it divided by
// the tokens produced in it (J/token), and each request charged J/token x its output tokens.
// Pure: the run's requests and energy readings in, the figures out.
//
//   SteadyState s = steady_state(requests, readings);
//   if (s.found) print(s.j_per_token, s.request_energy_j[i]); else print(s.why);
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace zeus::proxy {

// One request of the run, times in seconds on the readings' clock.
struct RequestTimeline {
  double start_s = 0;
  double first_token_s = -1;  // -1: no token came
  double end_s = 0;
  int64_t output_tokens = 0;
  // When each token was seen (a stream's chunks); empty: the tokens are taken as spread evenly
  // from the first token (else the start) to the end.
  std::vector<double> token_times_s;
};

// A reading of the energy counter (J, summed over GPUs, monotone).
struct EnergyReading {
  double time_s = 0;
  double energy_j = 0;
};

struct SteadyState {
  bool found = false;
  std::string why;          // when not found
  int max_concurrency = 0;  // B
  double start_s = 0, end_s = 0;
  double energy_j = 0;  // in the window
  double tokens = 0;    // produced in the window
  double j_per_token = 0;
  std::vector<double> request_energy_j;       // j_per_token x output tokens, in the input's order
  std::vector<double> request_window_tokens;  // the tokens each produced inside the window
};

// The energy between two times, the counter interpolated linearly between readings (times
// outside the readings are clamped to them).
double energy_between(std::span<const EnergyReading> readings, double from_s, double to_s);

SteadyState steady_state(std::span<const RequestTimeline> requests,
                         std::span<const EnergyReading> readings);

}  // namespace zeus::proxy
