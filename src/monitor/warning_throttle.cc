#include "monitor/warning_throttle.h"

namespace zeus {

std::optional<long> WarningThrottle::record(double now_s) {
  ++pending_;
  if (printed_ && now_s - last_printed_s_ < interval_s_) return std::nullopt;
  printed_ = true;
  last_printed_s_ = now_s;
  const long count = pending_;
  pending_ = 0;
  return count;
}

}  // namespace zeus
