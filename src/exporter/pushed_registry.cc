#include "exporter/pushed_registry.h"

#include <cmath>

namespace zeus::exporter {

Result<std::unique_ptr<PushedRegistry>> PushedRegistry::connect(const std::string& url,
                                                                const std::string& job) {
  auto gateway = Pushgateway::connect(url, job, {}, "pushgateway_url");
  if (!gateway) return fail(gateway.error());
  std::unique_ptr<PushedRegistry> pushed(new PushedRegistry());
  pushed->gateway_ = std::move(*gateway);
  return pushed;
}

Result<void> PushedRegistry::push() {
  std::lock_guard<std::mutex> lock(push_mutex_);
  return gateway_->push("PUT", registry_.Collect());
}

Result<void> check_buckets(const std::vector<double>& buckets, const std::string& what) {
  if (buckets.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                what +
                    " bucket range cannot be empty: give upper bounds in J or omit it for the "
                    "defaults");
  }
  for (size_t i = 0; i < buckets.size(); ++i) {
    if (!std::isfinite(buckets[i]) || (i > 0 && !(buckets[i] > buckets[i - 1]))) {
      return fail(ErrorCode::kInvalidArgument,
                  what + " bucket bounds must be finite and strictly increasing (bound " +
                      std::to_string(i) + " is not)");
    }
  }
  return ok();
}

Result<void> check_update_period(double period_s) {
  if (!std::isfinite(period_s) || !(period_s > 0)) {
    return fail(ErrorCode::kInvalidArgument, "update_period must be a positive number of seconds");
  }
  return ok();
}

}  // namespace zeus::exporter
