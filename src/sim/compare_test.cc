#include "zeus/sim/sim_compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <vector>


namespace zeus::sim {
namespace {

std::filesystem::path bundled_data() {
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "data";
}

TEST(Compare, PairedStatOnAHandMadeCase) {
  // A = {1, 2, 3, 6}: mean 3, sample variance (4 + 1 + 0 + 9)/3 = 14/3, se = √(14/3 / 4).
  // B = {0, 2, 2, 4}: mean 2, sample variance (4 + 0 + 0 + 4)/3 = 8/3, se = √(8/3 / 4).
  // A − B = {1, 0, 1, 2}: mean 1, sample variance (0 + 1 + 0 + 1)/3 = 2/3, se = √(2/3 / 4).
  const std::vector<double> a = {1, 2, 3, 6}, b = {0, 2, 2, 4};
  const PairedStat s = paired_stat(a, b);
  EXPECT_DOUBLE_EQ(s.mean_a, 3.0);
  EXPECT_DOUBLE_EQ(s.mean_b, 2.0);
  EXPECT_DOUBLE_EQ(s.mean_diff, 1.0);
  EXPECT_DOUBLE_EQ(s.se_a, std::sqrt(14.0 / 12.0));
  EXPECT_DOUBLE_EQ(s.se_b, std::sqrt(8.0 / 12.0));
  EXPECT_DOUBLE_EQ(s.se_diff, std::sqrt(2.0 / 12.0));
  // Pairing removes the shared luck: the difference's error is below either side's.
  EXPECT_LT(s.se_diff, s.se_b);
  // One seed: no spread to estimate.
  const std::vector<double> one_a = {5}, one_b = {3};
  const PairedStat one = paired_stat(one_a, one_b);
  EXPECT_DOUBLE_EQ(one.mean_diff, 2.0);
  EXPECT_EQ(one.se_a, 0.0);
  EXPECT_EQ(one.se_diff, 0.0);
}

TEST(Compare, IdenticalRulesDifferByExactlyZeroAndThreadsDoNotMatter) {
  CompareOptions options;
  options.experiment.data_dir = bundled_data();
  options.experiment.seeds = 4;
  options.experiment.workloads = {"squad"};
  options.a = *parse_zeus_rules("zeus");
  options.b = *parse_zeus_rules("zeus");
  options.experiment.threads = 1;
  auto one = run_compare(options);
  ASSERT_TRUE(one.has_value()) << one.error().to_string();
  const WorkloadComparison& w = one->workloads.at(0);
  EXPECT_EQ(w.cum_regret_j.mean_diff, 0.0);
  EXPECT_EQ(w.cum_regret_j.se_diff, 0.0);
  EXPECT_EQ(w.cum_regret_j.mean_a, w.cum_regret_j.mean_b);
  options.experiment.threads = 3;
  options.b = *parse_zeus_rules("upstream");
  auto three = run_compare(options);
  options.experiment.threads = 1;
  auto serial = run_compare(options);
  ASSERT_TRUE(three && serial);
  EXPECT_EQ(three->workloads[0].cum_regret_j.mean_diff, serial->workloads[0].cum_regret_j.mean_diff);
  EXPECT_EQ(three->workloads[0].cum_energy_ratio.se_b, serial->workloads[0].cum_energy_ratio.se_b);
  EXPECT_NE(format_compare_table(*three).find("squad"), std::string::npos);
}

TEST(ZeusRules, PresetsAndOverrides) {
  auto zeus = parse_zeus_rules("zeus");
  ASSERT_TRUE(zeus.has_value());
  EXPECT_EQ(zeus->early_stop, EarlyStopMode::kPredictive);
  EXPECT_EQ(zeus->prune_factor, 1.5);
  EXPECT_FALSE(zeus->upstream_bookkeeping);
  EXPECT_EQ(zeus->pruning_stop_after_rises, 3);
  auto upstream = parse_zeus_rules("upstream");
  ASSERT_TRUE(upstream.has_value());
  EXPECT_EQ(upstream->early_stop, EarlyStopMode::kKnownEpochCost);
  EXPECT_FALSE(upstream->prune_factor.has_value());
  EXPECT_TRUE(upstream->upstream_bookkeeping);
  EXPECT_EQ(upstream->pruning_stop_after_rises, 0);
  auto mixed = parse_zeus_rules(
      "zeus,early_stop=after-crossing,prune_factor=off,stop_after_rises=0,mab_min_relative_sd=0.2");
  ASSERT_TRUE(mixed.has_value());
  EXPECT_EQ(mixed->early_stop, EarlyStopMode::kAfterCrossing);
  EXPECT_FALSE(mixed->prune_factor.has_value());
  EXPECT_EQ(mixed->mab_min_relative_sd, 0.2);
  EXPECT_EQ(zeus_rules_text(*mixed),
            "early_stop=after-crossing,prune_factor=off,pruning_beta=off,stop_after_rises=0,"
            "mab_min_relative_sd=0.2,"
            "upstream_bookkeeping=0");
  EXPECT_EQ(*parse_zeus_rules("zeus,prune_factor=1.25")->prune_factor, 1.25);
  for (const char* bad : {"zeuss", "zeus,early_stop=never", "zeus,prune_factor=0.5", "zeus,colour=red",
                          "zeus,prune_factor", "zeus,upstream_bookkeeping=maybe"}) {
    auto r = parse_zeus_rules(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message.find("use"), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace zeus::sim
