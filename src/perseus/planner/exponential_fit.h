// Least-squares fit of e'(q) = a * exp(b * q) + c to an operation's options (docs/perseus.md).
// Levenberg-Marquardt (analytic Jacobian, Marquardt scaling) from every start point of the grid
// a in {10, 100, 1000} x b in {-k * unit / 0.001 : k in {.01, .02, .03, .04, .05, .1}} x
// c in {10, 100, 1000}; a fit is rejected when it does not converge, is not finite, leaves the
// Jacobian rank-deficient (the reference's "infinite covariance") or has a < 0 (not convex).
// Strategy "best": the lowest mean squared error, the first on ties. Pure.
#pragma once

#include <cstdint>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/perseus/pfo_planner.h"

namespace zeus::pfo {

struct FitPoint {
  double x = 0.0;  // quantised time
  double y = 0.0;  // effective energy
};

struct FitResult {
  ExponentialCost cost;
  double mse = 0.0;
};

// Mean squared error of `cost` over `points`.
double fit_mse(const ExponentialCost& cost, const std::vector<FitPoint>& points);

// One Levenberg-Marquardt run from `start`; kInternal when rejected (the reason in the message).
Result<FitResult> fit_exponential_from(const std::vector<FitPoint>& points,
                                       const ExponentialCost& start);

// The grid search above; kInvalidArgument when no start point gives an acceptable fit.
Result<FitResult> fit_exponential(const std::vector<FitPoint>& points, double unit_time_s);

}  // namespace zeus::pfo
