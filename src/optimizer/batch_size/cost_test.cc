#include "optimizer/batch_size/cost.h"

#include <gtest/gtest.h>

namespace zeus::bso {
namespace {

TEST(CostTest, WeighsEnergyAgainstMaxPowerTime) {
  // 0.5·3000 + 0.5·300·10 = 1500 + 1500.
  EXPECT_DOUBLE_EQ(zeus_cost(3000, 10, 0.5, 300), 3000);
  // η = 1: energy only; η = 0: time × max power only.
  EXPECT_DOUBLE_EQ(zeus_cost(3000, 10, 1.0, 300), 3000);
  EXPECT_DOUBLE_EQ(zeus_cost(3000, 10, 0.0, 300), 3000 * 0 + 300 * 10);
  EXPECT_DOUBLE_EQ(zeus_cost(1000, 20, 0.25, 400), 0.25 * 1000 + 0.75 * 400 * 20);
}

TEST(CostTest, EpochCostIsCostOfOneEpoch) {
  // 60 s at 250 W: E = 15000 J; 0.5·15000 + 0.5·300·60 = 7500 + 9000.
  EXPECT_DOUBLE_EQ(epoch_cost(60, 250, 0.5, 300), 16500);
  EXPECT_DOUBLE_EQ(3 * epoch_cost(60, 250, 0.5, 300), zeus_cost(3 * 15000, 180, 0.5, 300));
}

}  // namespace
}  // namespace zeus::bso
