#include "optimizer/batch_size/gpu_translation.h"

#include <gtest/gtest.h>

namespace zeus::bso {
namespace {

GpuEpochProfile v100() {
  GpuEpochProfile p;
  p.gpu_model = "V100";
  p.max_power_w = 300;
  p.number_of_gpus = 1;
  p.points = {{32, 150.0, 200.0}, {64, 120.0, 250.0}};
  return p;
}

TEST(GpuTranslationTest, EpochsTimesTheNewEpochCost) {
  // 10 epochs × 120 s = 1200 s; × 250 W = 300000 J; cost = 0.5·300000 + 0.5·300·1200 = 330000.
  Result<TranslatedObservation> t = translate_observation(64, 10, v100(), 0.5);
  ASSERT_TRUE(t.has_value()) << t.error().to_string();
  EXPECT_DOUBLE_EQ(t->time_s, 1200);
  EXPECT_DOUBLE_EQ(t->energy_j, 300000);
  EXPECT_DOUBLE_EQ(t->cost, 330000);
  // 4 epochs of 32 at η = 0.25: 600 s, 120000 J; 0.25·120000 + 0.75·300·600 = 30000 + 135000.
  t = translate_observation(32, 4, v100(), 0.25);
  ASSERT_TRUE(t.has_value());
  EXPECT_DOUBLE_EQ(t->cost, 165000);
}

TEST(GpuTranslationTest, MissingBatchSizeNamesIt) {
  Result<TranslatedObservation> t = translate_observation(128, 10, v100(), 0.5);
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(t.error().message.find("128"), std::string::npos);
  EXPECT_NE(t.error().message.find("V100"), std::string::npos);
}

TEST(GpuTranslationTest, ValidatesTheProfile) {
  EXPECT_TRUE(validate_gpu_profile(v100()).has_value());
  GpuEpochProfile p = v100();
  p.max_power_w = 0;
  EXPECT_FALSE(validate_gpu_profile(p).has_value());
  p = v100();
  p.points.push_back({64, 1.0, 1.0});
  EXPECT_FALSE(validate_gpu_profile(p).has_value());
  p = v100();
  p.points[0].epoch_time_s = -1;
  EXPECT_FALSE(validate_gpu_profile(p).has_value());
  p = v100();
  p.number_of_gpus = 0;
  EXPECT_FALSE(validate_gpu_profile(p).has_value());
}

}  // namespace
}  // namespace zeus::bso
