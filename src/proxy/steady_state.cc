#include "proxy/steady_state.h"

#include <algorithm>
#include <utility>

namespace zeus::proxy {
namespace {

double counter_at(std::span<const EnergyReading> readings, double t) {
  if (t <= readings.front().time_s) return readings.front().energy_j;
  if (t >= readings.back().time_s) return readings.back().energy_j;
  auto after = std::upper_bound(readings.begin(), readings.end(), t,
                                [](double x, const EnergyReading& r) { return x < r.time_s; });
  const EnergyReading& b = *after;
  const EnergyReading& a = *(after - 1);
  const double span = b.time_s - a.time_s;
  return span > 0 ? a.energy_j + (b.energy_j - a.energy_j) * (t - a.time_s) / span : b.energy_j;
}

int max_concurrency(std::span<const RequestTimeline> requests) {
  std::vector<std::pair<double, int>> events;  // ends (-1) sort before starts (+1) at one time
  for (const auto& r : requests) {
    events.emplace_back(r.start_s, +1);
    events.emplace_back(r.end_s, -1);
  }
  std::sort(events.begin(), events.end());
  int now = 0, most = 0;
  for (const auto& [t, step] : events) most = std::max(most, now += step);
  return most;
}

double tokens_in(const RequestTimeline& r, double from_s, double to_s) {
  if (!r.token_times_s.empty()) {
    return static_cast<double>(std::count_if(r.token_times_s.begin(), r.token_times_s.end(),
                                             [&](double t) { return t >= from_s && t <= to_s; }));
  }
  const double begin = r.first_token_s >= 0 ? r.first_token_s : r.start_s;
  const double life = r.end_s - begin;
  if (life <= 0) return begin >= from_s && begin <= to_s ? static_cast<double>(r.output_tokens) : 0;
  const double overlap = std::max(0.0, std::min(r.end_s, to_s) - std::max(begin, from_s));
  return static_cast<double>(r.output_tokens) * overlap / life;
}

}  // namespace

double energy_between(std::span<const EnergyReading> readings, double from_s, double to_s) {
  if (readings.empty() || to_s <= from_s) return 0;
  return counter_at(readings, to_s) - counter_at(readings, from_s);
}

SteadyState steady_state(std::span<const RequestTimeline> requests,
                         std::span<const EnergyReading> readings) {
  SteadyState out;
  const int n = static_cast<int>(requests.size());
  out.max_concurrency = max_concurrency(requests);
  const int b = out.max_concurrency;
  std::vector<double> first_tokens, ends;
  for (const auto& r : requests) {
    if (r.first_token_s >= 0) first_tokens.push_back(r.first_token_s);
    ends.push_back(r.end_s);
  }
  std::sort(first_tokens.begin(), first_tokens.end());
  std::sort(ends.begin(), ends.end());
  const int finished_at_end = n - b - 1;
  if (b < 1 || static_cast<int>(first_tokens.size()) < b || finished_at_end < 1) {
    out.why = "too few requests for a steady state: " + std::to_string(n) + " requests, at most " +
              std::to_string(b) + " at once (it needs more than 2 x that, and B first tokens)";
    return out;
  }
  out.start_s = first_tokens[static_cast<size_t>(b - 1)];
  out.end_s = ends[static_cast<size_t>(finished_at_end - 1)];
  if (out.end_s <= out.start_s) {
    out.why = "no steady state: " + std::to_string(finished_at_end) +
              " requests had finished before " + std::to_string(b) + " had their first token";
    return out;
  }
  if (readings.size() < 2 || readings.front().time_s > out.start_s ||
      readings.back().time_s < out.end_s) {
    out.why = "the energy readings do not cover the steady-state window";
    return out;
  }
  out.energy_j = energy_between(readings, out.start_s, out.end_s);
  for (const auto& r : requests) {
    out.request_window_tokens.push_back(tokens_in(r, out.start_s, out.end_s));
    out.tokens += out.request_window_tokens.back();
  }
  if (!(out.tokens > 0)) {
    out.why = "no token was produced in the steady-state window";
    return out;
  }
  out.found = true;
  out.j_per_token = out.energy_j / out.tokens;
  for (const auto& r : requests) {
    out.request_energy_j.push_back(out.j_per_token * static_cast<double>(r.output_tokens));
  }
  return out;
}

}  // namespace zeus::proxy
