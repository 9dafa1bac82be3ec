// WarningThrottle: when a warning that may repeat on every window is printed — its first
// occurrence, then at most once per interval a summary of the occurrences in between — so a
// per-step training loop does not flood stderr. Pure: the caller passes the time.
// Units: seconds on any clock. Thread-safety: none (owned by one EnergyMonitor).
//
//   WarningThrottle throttle(60.0);
//   if (auto n = throttle.record(now_s)) log_warning(*n == 1 ? full : summary(*n));
#pragma once

#include <optional>

namespace zeus {

class WarningThrottle {
 public:
  explicit WarningThrottle(double interval_s) : interval_s_(interval_s) {}

  // Records one occurrence at `now_s`. Returns nullopt when nothing is to be printed now, else
  // the number of occurrences the printed warning stands for: 1 for the very first, then those
  // since the previous printed one (this one included).
  std::optional<long> record(double now_s);

 private:
  double interval_s_;
  bool printed_ = false;
  double last_printed_s_ = 0.0;
  long pending_ = 0;  // occurrences since the last printed warning
};

}  // namespace zeus
