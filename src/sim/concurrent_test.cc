#include <gtest/gtest.h>

#include "sim/experiments_fixture.h"
#include "zeus/sim/sim_concurrent.h"
#include "zeus/sim/sim_report.h"

namespace zeus::sim {
namespace {

namespace fs = std::filesystem;
using testing::ExperimentsTest;

TEST_F(ExperimentsTest, SparseArrivalsReplayTheSequentialJobExactly) {
  // Arrivals a million Default durations apart never overlap: every run is observed before the
  // next is planned, the random streams are drawn in the same order, so the cost is the same.
  auto result = run_concurrent(options_, {1e-6});
  ASSERT_TRUE(result.has_value()) << result.error().to_string();
  const ConcurrentCell& cell = result->workloads[0].cells[0];
  EXPECT_DOUBLE_EQ(cell.in_flight.mean, 1.0);
  EXPECT_DOUBLE_EQ(cell.distinct_in_flight.mean, 1.0);
  EXPECT_DOUBLE_EQ(cell.cum_regret_j.mean, cell.sequential_regret_j.mean);
  EXPECT_EQ(cell.concurrent_pruning_answers.mean, 0.0);
}

TEST_F(ExperimentsTest, OverlappingSubmissionsAreSpreadAndAnsweredDuringPruning) {
  options_.sim.recurrences = 60;
  auto result = run_concurrent(options_, {1.0, 4.0});
  ASSERT_TRUE(result.has_value()) << result.error().to_string();
  const ConcurrentWorkload& w = result->workloads[0];
  EXPECT_EQ(w.submissions, 60);
  EXPECT_GT(w.default_duration_s, 0.0);
  const ConcurrentCell& busy = w.cells[1];
  EXPECT_GT(busy.in_flight.mean, w.cells[0].in_flight.mean);
  EXPECT_GT(busy.in_flight.mean, 2.0);
  EXPECT_GT(busy.distinct_in_flight.mean, 1.0);  // concurrent runs do not all share one batch size
  EXPECT_LE(busy.distinct_in_flight.mean, busy.in_flight.mean);
  EXPECT_GT(busy.concurrent_pruning_answers.mean, 0.0);
  EXPECT_FALSE(run_concurrent(options_, {0.0}).has_value());

  auto dir = write_concurrent_report(*result, dir_ / "concurrent", ReportOptions{"none"});
  ASSERT_TRUE(dir.has_value()) << dir.error().to_string();
  EXPECT_NE(read(dir_ / "concurrent" / "concurrent.csv").find("squad,60,"), std::string::npos);
}

}  // namespace
}  // namespace zeus::sim
