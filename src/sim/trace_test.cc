#include <gtest/gtest.h>

#include "sim/sim_test_util.h"
#include "zeus/sim/sim_trace.h"

namespace zeus::sim {
namespace {

TEST(SimTrace, JoinsTrainingPathsWithPowerTable) {
  WorkloadTrace trace = testing::toy_trace("2,nan,3");
  EXPECT_EQ(trace.batch_sizes, (std::vector<int>{8, 16, 32}));
  EXPECT_EQ(trace.power_limits_w, (std::vector<double>{100, 200}));
  EXPECT_DOUBLE_EQ(trace.max_power_w, 300.0);
  EXPECT_EQ(trace.default_b, 1);
  EXPECT_EQ(trace.paths[1], (std::vector<int>{4, 4}));
  EXPECT_EQ(trace.paths[2], (std::vector<int>{2, 0, 3}));
  EXPECT_DOUBLE_EQ(trace.time_per_epoch_s(2, 0), 6.0);
  EXPECT_DOUBLE_EQ(trace.average_power_w(1, 1), 150.0);
  EXPECT_DOUBLE_EQ(trace.epoch_cost(0, 1, 0.5), 3360.0);
  EXPECT_EQ(trace.batch_index(32), 2);
  EXPECT_EQ(trace.batch_index(64), -1);
}

TEST(SimTrace, DefaultBatchSizeIsCappedAtTheLargestInTheTrace) {
  auto train = parse_train_trace(testing::toy_train_csv(), "t");
  auto power = parse_power_trace(testing::toy_power_csv(), "p");
  Workload workload = testing::toy_workload();
  workload.default_batch_size = 1024;
  auto trace = join_trace(*train, *power, workload, "g");
  ASSERT_TRUE(trace.has_value()) << trace.error().to_string();
  EXPECT_EQ(trace->default_b, 2);
  EXPECT_EQ(trace->workload.default_batch_size, 32);
}

TEST(SimTrace, MissingColumnIsOneClearError) {
  auto rows = parse_power_trace("dataset,network,batch_size,optimizer,power_limit,average_power\n", "p.csv");
  ASSERT_FALSE(rows.has_value());
  EXPECT_EQ(rows.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(rows.error().message.find("p.csv: missing column(s) time_per_epoch"), std::string::npos)
      << rows.error().message;
}

TEST(SimTrace, NonNumericCellNamesFileLineAndColumn) {
  std::string csv = testing::toy_power_csv();
  csv.replace(csv.find("12,95"), 5, "12,9x");
  auto rows = parse_power_trace(csv, "p.csv");
  ASSERT_FALSE(rows.has_value());
  EXPECT_EQ(rows.error().message, "p.csv line 4: column average_power: '9x' is not a number");
  auto train = parse_train_trace("dataset,network,batch_size,optimizer,run,target_metric,target_epoch\n"
                                 "a,b,8,c,1,0.5,abc\n", "t.csv");
  ASSERT_FALSE(train.has_value());
  EXPECT_EQ(train.error().message, "t.csv line 2: column target_epoch: 'abc' is not a number");
}

TEST(SimTrace, RaggedRowAndEmptyFileAreErrors) {
  EXPECT_FALSE(parse_power_trace("", "p.csv").has_value());
  auto rows = parse_power_trace(testing::toy_power_csv() + "toy,net,8\n", "p.csv");
  ASSERT_FALSE(rows.has_value());
  EXPECT_NE(rows.error().message.find("line 9"), std::string::npos) << rows.error().message;
}

TEST(SimTrace, UnknownWorkloadOrGpuIsAnError) {
  auto workload = load_workload_trace("/nonexistent", "v100", "mnist");
  ASSERT_FALSE(workload.has_value());
  EXPECT_NE(workload.error().message.find("unknown workload 'mnist'"), std::string::npos);
  auto gpu = load_workload_trace("/nonexistent", "h100", "squad");
  ASSERT_FALSE(gpu.has_value());
  EXPECT_NE(gpu.error().message.find("unknown GPU 'h100'"), std::string::npos);
  auto missing = load_workload_trace("/nonexistent", "v100", "squad");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

TEST(SimTrace, WorkloadAbsentIsAnErrorAndIncompleteGridsAreLeftOut) {
  auto train = parse_train_trace(testing::toy_train_csv(), "t");
  auto power = parse_power_trace(testing::toy_power_csv(), "p");
  auto squad = join_trace(*train, *power, *find_workload("squad"), "g");
  ASSERT_FALSE(squad.has_value());
  EXPECT_NE(squad.error().message.find("no run with target metric"), std::string::npos);
  std::string csv = testing::toy_power_csv();
  csv.erase(csv.find("toy,net,16,sgd,100"), std::string("toy,net,16,sgd,100,12,95\n").size());
  auto holes = join_trace(*train, *parse_power_trace(csv, "p"), testing::toy_workload(), "g");
  ASSERT_TRUE(holes.has_value()) << holes.error().to_string();
  EXPECT_EQ(holes->batch_sizes, (std::vector<int>{8, 32}));  // 16 lacks its 100 W row
  EXPECT_EQ(holes->dropped_batch_sizes, (std::vector<int>{16}));
  EXPECT_EQ(holes->workload.default_batch_size, 8);  // b0 = 16 is gone: the largest below it
  auto dup = join_trace(*train, *parse_power_trace(testing::toy_power_csv() + "toy,net,8,sgd,100,1,1\n", "p"),
                        testing::toy_workload(), "g");
  ASSERT_FALSE(dup.has_value());
  EXPECT_NE(dup.error().message.find("two rows for batch size 8"), std::string::npos);
}

TEST(SimTrace, PaperWorkloadsAreKnown) {
  ASSERT_EQ(paper_workloads().size(), 6u);
  auto libri = find_workload("librispeech");
  ASSERT_TRUE(libri.has_value());
  EXPECT_EQ(libri->max_epochs, 16);
  EXPECT_EQ(libri->default_batch_size, 192);
}

}  // namespace
}  // namespace zeus::sim
