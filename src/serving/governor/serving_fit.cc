#include <algorithm>
#include <cmath>
#include <set>

#include "zeus/serving/serving_calibration.h"

namespace zeus {
namespace {

// Least squares of y = a + b x; false when x does not vary.
bool line_fit(const std::vector<double>& x, const std::vector<double>& y, double& a, double& b) {
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  const double det = n * sxx - sx * sx;
  if (n < 2 || std::abs(det) < 1e-18 * std::max(1.0, n * sxx)) return false;
  b = (n * sxy - sx * sy) / det;
  a = (sy - b * sx) / n;
  return true;
}

}  // namespace

Result<ServingProfile> fit_serving_profile(const std::vector<ServingCalibrationPoint>& points,
                                           double prompt_tokens, double idle_w) {
  std::set<double, std::greater<>> clocks;
  for (const ServingCalibrationPoint& p : points) {
    if (!(p.clock_mhz > 0) || p.concurrency < 1 || !(p.tpot_p50_s > 0) || !(p.ttft_p50_s > 0) ||
        !(p.power_w > 0)) {
      return fail(ErrorCode::kInvalidArgument,
                  "a calibration point without a positive clock, latency or power (at " +
                      std::to_string(static_cast<int>(p.clock_mhz)) + " MHz, concurrency " +
                      std::to_string(p.concurrency) + "): did its requests finish?");
    }
    clocks.insert(p.clock_mhz);
  }
  if (clocks.size() < 2 || points.size() < 3) {
    return fail(ErrorCode::kInvalidArgument,
                "the fit needs points at two clocks or more and three points or more");
  }
  if (!(prompt_tokens > 0)) {
    return fail(ErrorCode::kInvalidArgument, "the prompts' size must be positive");
  }
  ServingProfile profile;
  profile.clocks_mhz.assign(clocks.begin(), clocks.end());
  const double top = profile.max_clock();
  profile.kv_s_per_token = 0;  // folded into memory_s at the calibrated context
  profile.idle_w = idle_w;
  // Decode: TPOT against concurrency x slowdown.
  std::vector<double> x, y;
  for (const auto& p : points) {
    x.push_back(p.concurrency * top / p.clock_mhz);
    y.push_back(p.tpot_p50_s);
  }
  double memory_s = 0, per_seq = 0;
  const bool fitted = line_fit(x, y, memory_s, per_seq);
  if (!fitted || per_seq < 0) {  // one shape only, or TPOT not growing: all memory-bound
    double sum = 0;
    for (double v : y) sum += v;
    memory_s = sum / static_cast<double>(y.size());
    per_seq = 0;
  } else if (memory_s < 0) {  // all compute-bound: through the origin
    double sxy = 0, sxx = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      sxy += x[i] * y[i];
      sxx += x[i] * x[i];
    }
    memory_s = 0;
    per_seq = sxy / sxx;
  }
  profile.memory_s = memory_s;
  profile.decode_s_per_seq = per_seq;
  // Prefill: TTFT at the lowest concurrency, over the prompt's tokens x slowdown.
  int lowest = points.front().concurrency;
  for (const auto& p : points) lowest = std::min(lowest, p.concurrency);
  double sxy = 0, sxx = 0;
  for (const auto& p : points) {
    if (p.concurrency != lowest) continue;
    const double xp = prompt_tokens * top / p.clock_mhz;
    sxy += xp * std::max(0.0, p.ttft_p50_s - memory_s);
    sxx += xp * xp;
  }
  profile.prefill_s_per_token = sxx > 0 ? sxy / sxx : profile.prefill_s_per_token;
  // Power: base + k x (the clock's share of it).
  x.clear();
  y.clear();
  for (const auto& p : points) {
    const double compute = per_seq * p.concurrency * top / p.clock_mhz;
    const double share = compute + memory_s > 0 ? compute / (compute + memory_s) : 1;
    const double r = p.clock_mhz / top;
    x.push_back(std::pow(r, 3) * share + 0.5 * std::pow(r, 1.5) * (1 - share));
    y.push_back(p.power_w);
  }
  double base = 0, k = 0;
  if (!line_fit(x, y, base, k) || k < 0 || base < 0) {
    base = std::max(0.0, idle_w);
    double s1 = 0, s2 = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      s1 += x[i] * (y[i] - base);
      s2 += x[i] * x[i];
    }
    k = s2 > 0 ? std::max(0.0, s1 / s2) : 0;
  }
  profile.base_w = base;
  profile.compute_w = k;
  profile.memory_w = k / 2;
  return profile;
}

}  // namespace zeus
