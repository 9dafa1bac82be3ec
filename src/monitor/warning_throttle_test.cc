#include "monitor/warning_throttle.h"

#include <gtest/gtest.h>

namespace zeus {
namespace {

TEST(WarningThrottleTest, FirstOccurrenceThenOneSummaryPerInterval) {
  WarningThrottle throttle(60.0);
  EXPECT_EQ(throttle.record(0.0), 1);
  for (int i = 1; i < 1000; ++i) EXPECT_EQ(throttle.record(i * 0.01), std::nullopt);
  // 999 suppressed, then this one: the summary stands for 1000.
  EXPECT_EQ(throttle.record(60.0), 1000);
  EXPECT_EQ(throttle.record(60.5), std::nullopt);
  EXPECT_EQ(throttle.record(121.0), 2);
}

}  // namespace
}  // namespace zeus
