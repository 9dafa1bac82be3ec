// Measured-straggler detection: relative to the other pipelines, so neither a uniformly slower
// job nor a plan-dependent calibration drift is a straggler; T' from the calibration; recovery.
#include "perseus/server/straggler_detect.h"

#include <gtest/gtest.h>

namespace zeus::pfo {
namespace {

constexpr double kTMin = 2.0;   // planned seconds of the fastest plan
constexpr double kScale = 0.5;  // measured seconds per planned second

TEST(PipelineTimes, TheLongestMeanOfEachPipelinesRanks) {
  std::vector<RankInfo> ranks;
  for (int r = 0; r < 6; ++r) ranks.push_back({r, r / 2, r % 2, 0, {}});
  std::vector<ProfilingResult> results = {{0, {1.0, 3.0}, {}, {}, {}},  // mean 2
                                          {1, {1.0, 1.0}, {}, {}, {}},
                                          {2, {5.0}, {}, {}, {}},
                                          {3, {}, {}, {}, {}},          // nothing measured
                                          {9, {50.0}, {}, {}, {}}};     // not a rank of the job
  EXPECT_EQ(pipeline_times(ranks, results, 3), (std::vector<double>{2.0, 5.0, 0.0}));
}

TEST(StragglerDetector, AUniformSlowdownIsNoStraggler) {
  StragglerDetector d(0.05);
  d.observe({kScale * kTMin, kScale * kTMin}, kTMin, true);
  ASSERT_TRUE(d.calibration());
  EXPECT_DOUBLE_EQ(*d.calibration(), kScale);
  // The whole job runs 1.18x (and then 3x) slower than calibrated: no pipeline is a straggler.
  for (double slowdown : {1.18, 3.0}) {
    d.observe({slowdown * kScale * kTMin, slowdown * kScale * kTMin * 1.02}, kTMin, true);
    EXPECT_FALSE(d.straggler()) << slowdown;
  }
}

TEST(StragglerDetector, APlanDependentCalibrationDriftIsNoStraggler) {
  // Measured/planned is not the same for every plan: after an operator's straggler the job ran a
  // slower plan 1.3x longer than that plan's time would say; everyone alike is no straggler.
  StragglerDetector d(0.05);
  d.observe({kScale * kTMin, kScale * kTMin, kScale * kTMin}, kTMin, true);
  d.observe({1.3 * kScale * kTMin, 1.31 * kScale * kTMin, 1.29 * kScale * kTMin}, kTMin, false);
  EXPECT_FALSE(d.straggler());
}

TEST(StragglerDetector, DetectsTheSlowPipelineEstimatesTPrimeAndClearsOnRecovery) {
  StragglerDetector d(0.05);
  d.observe({0.0, 0.0}, kTMin, true);  // nothing measured: no calibration yet
  EXPECT_FALSE(d.calibration());
  d.observe({kScale * kTMin, kScale * kTMin}, kTMin, true);
  d.observe({kScale * kTMin, 1.04 * kScale * kTMin}, kTMin, true);  // within the tolerance
  EXPECT_FALSE(d.straggler());
  d.observe({kScale * kTMin, 1.5 * kScale * kTMin}, kTMin, true);
  ASSERT_TRUE(d.straggler());
  EXPECT_EQ(d.straggler()->pipeline, 1);
  EXPECT_DOUBLE_EQ(d.straggler()->time_s, 1.5 * kTMin);
  // The straggler keeps the fastest plan, pipeline 0 runs a slower one (longer, even than the
  // straggler): T' follows the straggler's own time; the others are not compared.
  d.observe({2.0 * kScale * kTMin, 1.6 * kScale * kTMin}, kTMin, false);
  ASSERT_TRUE(d.straggler());
  EXPECT_EQ(d.straggler()->pipeline, 1);
  EXPECT_DOUBLE_EQ(d.straggler()->time_s, 1.6 * kTMin);
  d.observe({2.0 * kScale * kTMin, 0.0}, kTMin, false);  // the straggler reported nothing
  EXPECT_DOUBLE_EQ(d.straggler()->time_s, 1.6 * kTMin);
  // It recovers: below (1 + tolerance) x T_min clears it.
  d.observe({1.6 * kScale * kTMin, 1.03 * kScale * kTMin}, kTMin, false);
  EXPECT_FALSE(d.straggler());
}

TEST(StragglerDetector, TheMedianOfTheOthersIsTheReference) {
  StragglerDetector d(0.1);
  d.observe({1.0, 1.0, 1.0, 1.0}, kTMin, true);
  // One other pipeline is slow too: the median of the others (1.0, 1.0, 1.5) is 1.0.
  d.observe({1.0, 1.5, 1.0, 1.6}, kTMin, true);
  ASSERT_TRUE(d.straggler());
  EXPECT_EQ(d.straggler()->pipeline, 3);
  EXPECT_DOUBLE_EQ(d.straggler()->time_s, 1.6 * kTMin);
}

TEST(StragglerDetector, OnePipelineNeverDetectsAMeasuredStraggler) {
  StragglerDetector d(0.05);
  d.observe({kScale * kTMin}, kTMin, true);
  d.observe({5.0 * kScale * kTMin}, kTMin, true);
  EXPECT_FALSE(d.straggler());
}

TEST(StragglerDetector, OnlyAFastestRoundCalibrates) {
  StragglerDetector d(0.05);
  d.observe({3.0, 3.0}, kTMin, false);
  EXPECT_FALSE(d.calibration());
  d.observe({1.0, 1.2}, kTMin, true);
  EXPECT_DOUBLE_EQ(*d.calibration(), 1.1 / kTMin);
}

}  // namespace
}  // namespace zeus::pfo
