#include "zeus/serving/power_budget.h"

#include <algorithm>
#include <cmath>

namespace zeus {
namespace {

// The correction's smoothing per period, and its range (a meter that reads 10x the model is a
// broken meter or model, not a correction).
constexpr double kCorrectionWeight = 0.3;
constexpr double kLeastCorrection = 0.5, kMostCorrection = 3.0;
// A GPU with no queue still has a little need: among idle ones the step that saves most wins.
constexpr double kLeastNeedS = 0.05;

}  // namespace

PowerBudget::PowerBudget(double budget_w, std::vector<double> ladder_mhz, double margin)
    : budget_w_(budget_w), ladder_(std::move(ladder_mhz)), margin_(margin) {}

Result<std::unique_ptr<PowerBudget>> PowerBudget::create(double budget_w,
                                                         std::vector<double> ladder_mhz,
                                                         double margin) {
  if (!(budget_w > 0 && budget_w <= 1e6)) {
    return fail(ErrorCode::kInvalidArgument,
                "a power budget of " + std::to_string(budget_w) +
                    " W: give the GPUs' total in watts, above 0 and at most 1,000,000");
  }
  if (!(margin > 0 && margin <= 1)) {
    return fail(ErrorCode::kInvalidArgument, "the power budget's margin must be above 0 and at most 1");
  }
  if (ladder_mhz.empty() || !std::is_sorted(ladder_mhz.begin(), ladder_mhz.end(), std::greater<>())) {
    return fail(ErrorCode::kInvalidArgument,
                "the power budget needs the clock ladder, highest first");
  }
  return std::unique_ptr<PowerBudget>(new PowerBudget(budget_w, std::move(ladder_mhz), margin));
}

size_t PowerBudget::index_of(double mhz) const {
  // The ladder clock nearest at or below `mhz` (a policy's clock is one of them).
  for (size_t i = 0; i < ladder_.size(); ++i) {
    if (ladder_[i] <= mhz + 1e-9) return i;
  }
  return ladder_.size() - 1;
}

BudgetDecision PowerBudget::allocate(std::span<const BudgetedGpu> gpus, double measured_total_w) {
  if (measured_total_w > 0 && last_predicted_ > 0) {
    const double ratio = std::clamp(measured_total_w / last_predicted_, kLeastCorrection, kMostCorrection);
    correction_ += kCorrectionWeight * (ratio - correction_);
  }
  std::vector<size_t> index(gpus.size());
  auto watts = [&](size_t g, size_t i) {
    const auto& w = gpus[g].watts_at;
    return w.empty() ? 0.0 : w[std::min(i, w.size() - 1)];
  };
  double total = 0;
  for (size_t g = 0; g < gpus.size(); ++g) {
    index[g] = index_of(gpus[g].wanted_mhz);
    total += watts(g, index[g]);
  }
  BudgetDecision d;
  const double allowed = margin_ * budget_w_ / correction_;
  while (total > allowed) {
    // The step that saves the most watts per unit of need.
    int best = -1;
    double best_score = 0;
    for (size_t g = 0; g < gpus.size(); ++g) {
      if (index[g] + 1 >= ladder_.size() || gpus[g].prefilling) continue;
      const double saved = watts(g, index[g]) - watts(g, index[g] + 1);
      if (!(saved > 0)) continue;
      const double score = saved / (std::max(0.0, gpus[g].need) + kLeastNeedS);
      if (score > best_score) {
        best_score = score;
        best = static_cast<int>(g);
      }
    }
    if (best < 0) {
      d.over = true;
      break;
    }
    const size_t g = static_cast<size_t>(best);
    total -= watts(g, index[g]) - watts(g, index[g] + 1);
    ++index[g];
    ++d.lowered_steps;
  }
  last_predicted_ = total;
  d.predicted_w = total * correction_;
  // The caps: an equal share each, except that a GPU predicted to draw more than its share gets
  // what it draws, paid for by the GPUs predicted under theirs in proportion to their slack
  // (never below what they draw). The budget split equally is where this starts: a GPU whose
  // load falls to nothing keeps most of its share for the burst that comes next.
  const double n = static_cast<double>(std::max<size_t>(1, gpus.size()));
  const double share = budget_w_ / n;
  double excess = 0, slack = 0;
  std::vector<double> predicted(gpus.size());
  for (size_t g = 0; g < gpus.size(); ++g) {
    predicted[g] = watts(g, index[g]) * correction_;
    excess += std::max(0.0, predicted[g] - share);
    slack += std::max(0.0, share - predicted[g]);
  }
  const double moved = std::min(excess, slack);
  for (size_t g = 0; g < gpus.size(); ++g) {
    d.clock_mhz.push_back(ladder_[index[g]]);
    double cap = share;
    if (predicted[g] > share && excess > 0) cap += (predicted[g] - share) * moved / excess;
    if (predicted[g] < share && slack > 0) cap -= (share - predicted[g]) * moved / slack;
    d.cap_w.push_back(cap);
  }
  return d;
}

}  // namespace zeus
