#include "proxy/counter_follower.h"

#include <algorithm>

namespace zeus::proxy {
namespace {

constexpr size_t kTimelineChanges = 4096;

}  // namespace

const std::vector<double>& CounterFollower::follow(double time_s,
                                                   const std::vector<double>& raw_j) {
  if (timelines_.size() != raw_j.size()) {
    timelines_.assign(raw_j.size(), CounterTimeline(kTimelineChanges));
    raw_j_ = raw_j;
    fed_j_ = raw_j;
    fed_s_ = time_s;
  }
  const double dt = std::max(0.0, time_s - fed_s_);
  for (size_t i = 0; i < raw_j.size(); ++i) {
    const bool restarted = raw_j[i] < raw_j_[i];
    CounterTimeline& timeline = timelines_[i];
    timeline.observe(time_s, raw_j[i]);
    timeline.forget_before(time_s - 1.0);
    const double estimate = timeline.estimate(time_s).value_or(raw_j[i]);
    const double rate = std::max(0.0, timeline.rate().value_or(0));
    const double floor_j = fed_j_[i] + 0.5 * rate * dt;
    const double ceiling_j = rate > 0 ? fed_j_[i] + 2 * rate * dt : estimate;
    fed_j_[i] = restarted ? estimate : std::clamp(estimate, floor_j, std::max(floor_j, ceiling_j));
    raw_j_[i] = raw_j[i];
  }
  fed_s_ = time_s;
  return fed_j_;
}

}  // namespace zeus::proxy
