#include "optimizer/batch_size/gaussian_ts.h"

#include <algorithm>
#include <cmath>

namespace zeus::bso {

Belief arm_belief(std::span<const double> costs, const Prior& prior, double min_relative_sd) {
  Belief belief;
  belief.num_observations = static_cast<int>(costs.size());
  if (costs.empty()) {
    belief.mean_cost = prior.mean_cost;
    belief.precision = prior.precision;
    return belief;
  }
  const double n = static_cast<double>(costs.size());
  double sum = 0.0;
  for (double c : costs) sum += c;
  const double mean = sum / n;
  double squares = 0.0;
  for (double c : costs) squares += (c - mean) * (c - mean);
  const double floor = (min_relative_sd * mean) * (min_relative_sd * mean);
  const double variance = std::max(squares / n, floor);
  if ((costs.size() == 1 && floor == 0.0) || variance == 0.0) {
    belief.mean_cost = mean;
    belief.precision = std::numeric_limits<double>::infinity();
    return belief;
  }
  belief.precision = prior.precision + n / variance;
  belief.mean_cost = (prior.precision * prior.mean_cost + sum / variance) / belief.precision;
  return belief;
}

namespace {
bool must_explore(const Belief& b, int num_explorations) {
  return b.num_observations < num_explorations || (b.num_observations == 0 && b.precision <= 0.0);
}
}  // namespace

size_t choose_arm(std::span<const Belief> beliefs, int num_explorations, Rng& rng) {
  ZEUS_CHECK(!beliefs.empty(), "choose_arm needs at least one arm");
  size_t unexplored = 0;
  for (const Belief& b : beliefs) unexplored += must_explore(b, num_explorations) ? 1 : 0;
  if (unexplored > 0) {
    uint64_t pick = rng.below(unexplored);
    for (size_t i = 0; i < beliefs.size(); ++i) {
      if (must_explore(beliefs[i], num_explorations) && pick-- == 0) return i;
    }
  }
  size_t best = 0;
  double best_sample = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < beliefs.size(); ++i) {
    const double z = rng.normal();
    const Belief& b = beliefs[i];
    const double sample = b.exact() ? b.mean_cost : b.mean_cost + z / std::sqrt(b.precision);
    if (sample < best_sample) {
      best_sample = sample;
      best = i;
    }
  }
  return best;
}

}  // namespace zeus::bso
