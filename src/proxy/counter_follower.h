// CounterFollower: what the proxy's ledger is given of each GPU's energy counter (the meter's
// decision core; pure: no clock, no I/O; thread-safety: none, the meter holds it under its mutex).
//
// A GPU may publish its counter only every ~100 ms (an H200): raw readings between two publishes
// repeat, so a request that lived between them would be charged 0 J and the one in flight at the
// next publish the whole step. Each GPU's readings go through a CounterTimeline
// (zeus/monitor/counter_timeline.h), whose estimate now is interpolated between publishes and
// extrapolated
// past the last at the last step's rate. What follow() gives tracks that estimate at between half
// and twice the counter's rate: when the estimate falls below it (the power dropped, the
// extrapolation overshot) no stretch of time is charged 0 J for the error, and when a publish
// lands above it the difference is not all charged to the requests of one interval; it meets the
// estimate again within a few steps. A counter that restarted (read lower than before) restarts
// it. On a counter that changes at every read, follow() gives the raw readings.
// A second of each GPU's changes is kept, at most 4,096.
//
//   CounterFollower follower;
//   const std::vector<double>& j = follower.follow(now_s, raw_j);  // per GPU, J
#pragma once

#include <vector>

#include "zeus/monitor/counter_timeline.h"

namespace zeus::proxy {

class CounterFollower {
 public:
  // The readings of every GPU at time_s (in time order); answers what the ledger is given.
  const std::vector<double>& follow(double time_s, const std::vector<double>& raw_j);

 private:
  std::vector<CounterTimeline> timelines_;
  std::vector<double> raw_j_;
  std::vector<double> fed_j_;
  double fed_s_ = 0;
};

}  // namespace zeus::proxy
