#include <gtest/gtest.h>

#include "sim/experiments_fixture.h"
#include "zeus/sim/sim_report.h"
#include "zeus/sim/sim_search_path.h"

namespace zeus::sim {
namespace {

namespace fs = std::filesystem;
using testing::ExperimentsTest;

TEST_F(ExperimentsTest, SearchPathFollowsEachPolicyOverTheRegretMap) {
  auto result = run_search_path(options_);
  ASSERT_TRUE(result.has_value()) << result.error().to_string();
  ASSERT_EQ(result->workloads.size(), 1u);
  const WorkloadSearchPath& w = result->workloads[0];
  EXPECT_EQ(w.oracle_batch_size, 64);
  // The heat map is 1 exactly at the Oracle's configuration and above it elsewhere.
  ASSERT_EQ(w.regret_ratio.size(), 3u);
  for (std::size_t b = 0; b < 3; ++b) {
    for (std::size_t p = 0; p < 3; ++p) {
      const bool oracle = w.batch_sizes[b] == w.oracle_batch_size && w.power_limits_w[p] == w.oracle_power_limit_w;
      if (oracle) {
        EXPECT_DOUBLE_EQ(w.regret_ratio[b][p], 1.0);
      } else {
        EXPECT_GT(w.regret_ratio[b][p], 1.0);
      }
    }
  }
  ASSERT_EQ(w.paths.size(), 2u);
  // Grid Search: b0 = 32 from the highest limit down, then b = 16.
  const PolicyPath& grid = w.paths[0];
  EXPECT_EQ(grid.policy, PolicyKind::kGridSearch);
  ASSERT_GE(grid.steps.size(), 4u);
  EXPECT_EQ(grid.steps[0].batch_size, 32);
  EXPECT_DOUBLE_EQ(grid.steps[0].power_limit_w, 250.0);
  EXPECT_DOUBLE_EQ(grid.steps[1].power_limit_w, 200.0);
  EXPECT_DOUBLE_EQ(grid.steps[2].power_limit_w, 150.0);
  EXPECT_EQ(grid.steps[3].batch_size, 16);
  // Zeus: starts at b0 with a JIT-profiled first epoch.
  const PolicyPath& zeus = w.paths[1];
  EXPECT_EQ(zeus.policy, PolicyKind::kZeus);
  EXPECT_EQ(zeus.steps[0].batch_size, 32);
  EXPECT_TRUE(zeus.steps[0].profiled);
  EXPECT_GE(zeus.distinct_configurations, 2);
  EXPECT_LE(zeus.distinct_configurations, 3);  // one power limit per batch size
  EXPECT_NE(format_search_path_table(*result).find("(32,250)"), std::string::npos);

  auto dir = write_search_path_report(*result, dir_ / "paths", ReportOptions{"none"});
  ASSERT_TRUE(dir.has_value()) << dir.error().to_string();
  EXPECT_TRUE(fs::exists(dir_ / "paths" / "search_path_squad_heat.csv"));
  EXPECT_TRUE(fs::exists(dir_ / "paths" / "search_path_squad_Zeus.csv"));
  EXPECT_NE(read(dir_ / "paths" / "search_path_squad.gp").find("with image"), std::string::npos);
}

}  // namespace
}  // namespace zeus::sim
