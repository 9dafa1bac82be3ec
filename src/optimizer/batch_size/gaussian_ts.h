// Gaussian Thompson sampling over batch sizes, with costs as negative rewards (docs/server.md,
// paper Algorithm 1), as pure functions the driver and the simulator share.
//
// An arm's belief about its mean cost comes from its observed costs c₁..cₙ (J) with population
// variance v: with v = 0 or n = 1 the belief is exactly the mean (infinite precision); otherwise
// precision = prior_precision + n/v and mean = (prior_precision·prior_mean + Σc/v)/precision.
// choose_arm() first forces explorations (arms with fewer than num_explorations observations, in
// random order), then draws one sample per arm and takes the cheapest. The window of the newest
// costs (data drift) is applied by newest_costs() before arm_belief().
// Pure: no state besides the Rng passed in; no allocation. Thread-safety: none needed.
//
//   Belief b = arm_belief(newest_costs(costs_of_arm, spec.window_size), {0.0, 0.0});
//   size_t i = choose_arm(beliefs, /*num_explorations=*/2, rng);   // index into beliefs
#pragma once

#include <cstddef>
#include <limits>
#include <span>

#include "optimizer/batch_size/rng.h"

namespace zeus::bso {

struct Prior {
  double mean_cost = 0.0;  // J
  double precision = 0.0;  // 1/J²; 0 = flat
};

struct Belief {
  double mean_cost = 0.0;  // J
  double precision = 0.0;  // 1/J²; +inf = the mean exactly
  int num_observations = 0;
  bool exact() const { return precision == std::numeric_limits<double>::infinity(); }
};

// The newest window_size costs of an arm (costs in observation order); window_size <= 0 = all.
inline std::span<const double> newest_costs(std::span<const double> costs, int window_size) {
  if (window_size <= 0 || costs.size() <= static_cast<size_t>(window_size)) return costs;
  return costs.subspan(costs.size() - static_cast<size_t>(window_size));
}

// The posterior belief of one arm. With no costs it is the prior itself. min_relative_sd > 0
// floors the per-observation variance at (min_relative_sd · mean)², so that one observation, or
// two that happen to agree, leave the arm uncertain instead of exact (the spec's
// mab_min_relative_sd; 0 = upstream's rule above).
Belief arm_belief(std::span<const double> costs, const Prior& prior, double min_relative_sd = 0.0);

// Index of the arm to pull. Arms with fewer than num_explorations observations, or with no
// observation and a flat prior (nothing to sample from), are explored first, one picked
// uniformly at random; otherwise one normal draw per arm (in index order) and the least sampled
// cost wins (ties: the lower index). beliefs must be non-empty.
size_t choose_arm(std::span<const Belief> beliefs, int num_explorations, Rng& rng);

}  // namespace zeus::bso
