#include "perseus/planner/exponential_fit.h"

#include <array>
#include <cmath>
#include <limits>
#include <string>

namespace zeus::pfo {
namespace {

using Vec3 = std::array<double, 3>;
using Mat3 = std::array<Vec3, 3>;

constexpr int kMaxIterations = 20000;

double sum_squares(const ExponentialCost& f, const std::vector<FitPoint>& points) {
  double total = 0.0;
  for (const FitPoint& p : points) {
    const double r = f.a * std::exp(f.b * p.x) + f.c - p.y;
    total += r * r;
  }
  return total;
}

// J^T J and J^T r at f (r = model - data).
void normal_equations(const ExponentialCost& f, const std::vector<FitPoint>& points, Mat3& jtj,
                      Vec3& jtr) {
  jtj = {};
  jtr = {};
  for (const FitPoint& p : points) {
    const double e = std::exp(f.b * p.x);
    const Vec3 row = {e, f.a * p.x * e, 1.0};
    const double r = f.a * e + f.c - p.y;
    for (int i = 0; i < 3; ++i) {
      jtr[i] += row[i] * r;
      for (int j = 0; j < 3; ++j) jtj[i][j] += row[i] * row[j];
    }
  }
}

// Solves m x = v by Cholesky; false when m is not (numerically) positive definite.
bool solve_spd(const Mat3& m, const Vec3& v, Vec3& x) {
  Mat3 l{};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j <= i; ++j) {
      double s = m[i][j];
      for (int k = 0; k < j; ++k) s -= l[i][k] * l[j][k];
      if (i == j) {
        if (!(s > 0.0)) return false;
        l[i][i] = std::sqrt(s);
      } else {
        l[i][j] = s / l[j][j];
      }
    }
  }
  Vec3 y{};
  for (int i = 0; i < 3; ++i) {
    double s = v[i];
    for (int k = 0; k < i; ++k) s -= l[i][k] * y[k];
    y[i] = s / l[i][i];
  }
  for (int i = 2; i >= 0; --i) {
    double s = y[i];
    for (int k = i + 1; k < 3; ++k) s -= l[k][i] * x[k];
    x[i] = s / l[i][i];
  }
  return true;
}

// True when the Jacobian at the solution has full rank, judged as SVD-based least squares does:
// the smallest singular value of the column-scaled Jacobian above eps * size * the largest.
bool full_rank(const Mat3& jtj, std::size_t num_points) {
  Mat3 scaled{};
  for (int i = 0; i < 3; ++i) {
    if (!(jtj[i][i] > 0.0)) return false;
    for (int j = 0; j < 3; ++j) scaled[i][j] = jtj[i][j] / std::sqrt(jtj[i][i] * jtj[j][j]);
  }
  // Eigenvalues of the 3x3 symmetric correlation matrix (closed form).
  const double p1 =
      scaled[0][1] * scaled[0][1] + scaled[0][2] * scaled[0][2] + scaled[1][2] * scaled[1][2];
  const double q = (scaled[0][0] + scaled[1][1] + scaled[2][2]) / 3.0;
  const double p2 = (scaled[0][0] - q) * (scaled[0][0] - q) +
                    (scaled[1][1] - q) * (scaled[1][1] - q) +
                    (scaled[2][2] - q) * (scaled[2][2] - q) + 2.0 * p1;
  const double p = std::sqrt(p2 / 6.0);
  if (p == 0.0) return true;
  Mat3 b{};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) b[i][j] = (scaled[i][j] - (i == j ? q : 0.0)) / p;
  }
  const double det = b[0][0] * (b[1][1] * b[2][2] - b[1][2] * b[2][1]) -
                     b[0][1] * (b[1][0] * b[2][2] - b[1][2] * b[2][0]) +
                     b[0][2] * (b[1][0] * b[2][1] - b[1][1] * b[2][0]);
  const double r = std::max(-1.0, std::min(1.0, det / 2.0));
  const double phi = std::acos(r) / 3.0;
  const double largest = q + 2.0 * p * std::cos(phi);
  const double smallest = q + 2.0 * p * std::cos(phi + 2.0 * M_PI / 3.0);
  // Singular values are square roots of these eigenvalues.
  const double threshold = std::numeric_limits<double>::epsilon() * static_cast<double>(num_points);
  return smallest > 0.0 && std::sqrt(smallest) > threshold * std::sqrt(largest);
}

}  // namespace

double ExponentialCost::operator()(int64_t quant_time) const {
  return a * std::exp(b * static_cast<double>(quant_time)) + c;
}

double fit_mse(const ExponentialCost& cost, const std::vector<FitPoint>& points) {
  return sum_squares(cost, points) / static_cast<double>(points.size());
}

Result<FitResult> fit_exponential_from(const std::vector<FitPoint>& points,
                                       const ExponentialCost& start) {
  if (points.size() <= 3) {
    return fail(ErrorCode::kInternal, "needs more points than the 3 coefficients");
  }
  ExponentialCost f = start;
  double sse = sum_squares(f, points);
  if (!std::isfinite(sse)) return fail(ErrorCode::kInternal, "not finite at the start point");
  Mat3 jtj;
  Vec3 jtr;
  normal_equations(f, points, jtj, jtr);
  double lambda = 1e-3;
  double nu = 2.0;
  bool converged = false;
  for (int iteration = 0; iteration < kMaxIterations && !converged; ++iteration) {
    Mat3 damped = jtj;
    for (int i = 0; i < 3; ++i) damped[i][i] += lambda * jtj[i][i];
    Vec3 step{};
    const Vec3 minus_g = {-jtr[0], -jtr[1], -jtr[2]};
    if (!solve_spd(damped, minus_g, step)) {
      lambda *= nu;
      nu *= 2.0;
      if (lambda > 1e30) break;
      continue;
    }
    const ExponentialCost next{f.a + step[0], f.b + step[1], f.c + step[2]};
    const double next_sse = sum_squares(next, points);
    // Predicted reduction of the linearised model: step . (lambda D step - g).
    double predicted = 0.0;
    for (int i = 0; i < 3; ++i) predicted += step[i] * (lambda * jtj[i][i] * step[i] + minus_g[i]);
    const double rho = predicted > 0.0 ? (sse - next_sse) / predicted : -1.0;
    bool small_step = true;
    for (int i = 0; i < 3; ++i) {
      const double x = i == 0 ? f.a : (i == 1 ? f.b : f.c);
      if (std::abs(step[i]) > 1e-13 * (std::abs(x) + 1e-13)) small_step = false;
    }
    if (std::isfinite(next_sse) && rho > 0.0) {
      const double reduction = sse - next_sse;
      f = next;
      sse = next_sse;
      normal_equations(f, points, jtj, jtr);
      lambda *= std::max(1.0 / 3.0, 1.0 - std::pow(2.0 * rho - 1.0, 3));
      nu = 2.0;
      if (small_step || reduction <= 1e-15 * sse) converged = true;
    } else {
      if (small_step) converged = true;
      lambda *= nu;
      nu *= 2.0;
      if (lambda > 1e30) converged = true;  // no descent direction left: a stationary point
    }
  }
  if (!converged) return fail(ErrorCode::kInternal, "did not converge");
  if (!std::isfinite(f.a) || !std::isfinite(f.b) || !std::isfinite(f.c) || !std::isfinite(sse)) {
    return fail(ErrorCode::kInternal, "not finite");
  }
  if (!full_rank(jtj, points.size())) return fail(ErrorCode::kInternal, "rank-deficient Jacobian");
  if (f.a < 0.0) return fail(ErrorCode::kInternal, "a < 0 (not convex)");
  return FitResult{f, sse / static_cast<double>(points.size())};
}

Result<FitResult> fit_exponential(const std::vector<FitPoint>& points, double unit_time_s) {
  const double as[] = {1e1, 1e2, 1e3};
  const double ks[] = {0.01, 0.02, 0.03, 0.04, 0.05, 0.1};
  const double cs[] = {1e1, 1e2, 1e3};
  bool found = false;
  FitResult best;
  std::string last_reason = "no start point";
  for (double a : as) {
    for (double k : ks) {
      for (double c : cs) {
        auto fit = fit_exponential_from(points, {a, -k * unit_time_s / 0.001, c});
        if (!fit) {
          last_reason = fit.error().message;
          continue;
        }
        if (!found || fit->mse < best.mse) {
          best = *fit;
          found = true;
        }
      }
    }
  }
  if (!found) {
    return fail(
        ErrorCode::kInvalidArgument,
        "no start point of the grid gives an acceptable exponential fit (last: " + last_reason +
            "); inject coefficients for this operation or check its measurements");
  }
  return best;
}

}  // namespace zeus::pfo
