#include "train/instruction_recorder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "zeus/replay_gpu.h"

namespace zeus::pfo {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A 200 W GPU on simulated time: an instruction of t seconds costs 200 t joules.
class InstructionRecorderTest : public ::testing::Test {
 protected:
  InstructionRecorderTest() {
    ReplayGpuConfig config;
    config.power_model = ReplayGpu::capped_power_model(200.0);
    devices_.gpus.push_back(std::make_unique<ReplayGpu>(clock_, config));
    monitor_ = std::move(*EnergyMonitor::create(
        devices_, clock_, {.cpu_indices = std::vector<int>{}, .start_sampler_thread = false}));
  }

  // One instruction of `seconds`, then a 10 ms gap (in the iteration, in no instruction).
  void run(InstructionRecorder& recorder, const std::string& name, double seconds) {
    ASSERT_TRUE(recorder.on_instruction_begin(name).has_value());
    clock_.advance_s(seconds);
    ASSERT_TRUE(recorder.on_instruction_end(name).has_value());
    clock_.advance_s(0.01);
  }

  FakeClock clock_;
  Devices devices_;
  std::unique_ptr<EnergyMonitor> monitor_;
  int syncs_ = 0;
};

TEST_F(InstructionRecorderTest, AccumulatesIterationsAndPerNameBreakdownsThatLineUp) {
  InstructionRecorder recorder(*monitor_, 5, [this] { ++syncs_; });
  ASSERT_TRUE(recorder.on_step_begin().has_value());
  run(recorder, "forward", 0.1);
  run(recorder, "backward", 0.2);
  run(recorder, "forward", 0.1);
  ASSERT_TRUE(recorder.on_step_end().has_value());
  EXPECT_EQ(syncs_, 8);  // every window edge, first
  ASSERT_TRUE(recorder.on_step_begin().has_value());
  run(recorder, "forward", 0.3);
  run(recorder, "recompute", 0.05);  // a name first seen in the second iteration
  ASSERT_TRUE(recorder.on_step_end().has_value());
  EXPECT_EQ(recorder.iterations(), 2u);

  const ProfilingResult result = recorder.take();
  EXPECT_EQ(result.rank, 5);
  ASSERT_EQ(result.iter_time.size(), 2u);
  EXPECT_NEAR(result.iter_time[0], 0.43, 1e-9);
  EXPECT_NEAR(result.iter_time[1], 0.37, 1e-9);
  EXPECT_THAT(result.iter_energy, ElementsAre(DoubleNear(86.0, 1e-3), DoubleNear(74.0, 1e-3)));
  // Every name has one list per iteration, empty where it did not run.
  ASSERT_EQ(result.time_breakdown.size(), 3u);
  for (const auto& [name, per_iteration] : result.time_breakdown) {
    EXPECT_EQ(per_iteration.size(), 2u) << name;
    EXPECT_EQ(result.energy_breakdown.at(name).size(), 2u) << name;
  }
  EXPECT_THAT(result.time_breakdown.at("forward")[0],
              ElementsAre(DoubleNear(0.1, 1e-9), DoubleNear(0.1, 1e-9)));
  EXPECT_THAT(result.time_breakdown.at("forward")[1], ElementsAre(DoubleNear(0.3, 1e-9)));
  EXPECT_THAT(result.energy_breakdown.at("forward")[1], ElementsAre(DoubleNear(60.0, 1e-3)));
  EXPECT_THAT(result.time_breakdown.at("backward")[1], IsEmpty());
  EXPECT_THAT(result.time_breakdown.at("recompute")[0], IsEmpty());
  EXPECT_THAT(result.energy_breakdown.at("recompute")[1], ElementsAre(DoubleNear(10.0, 1e-3)));

  // take() starts afresh, for the same rank.
  EXPECT_EQ(recorder.iterations(), 0u);
  const ProfilingResult empty = recorder.take();
  EXPECT_EQ(empty.rank, 5);
  EXPECT_TRUE(empty.iter_time.empty());
  EXPECT_TRUE(empty.time_breakdown.empty());
}

TEST_F(InstructionRecorderTest, MisorderedCallsAreInvalidArguments) {
  InstructionRecorder recorder(*monitor_, 0, {});
  EXPECT_EQ(recorder.on_instruction_begin("forward").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(recorder.on_step_end().error().code, ErrorCode::kInvalidArgument);
  ASSERT_TRUE(recorder.on_step_begin().has_value());
  EXPECT_EQ(recorder.on_step_begin().error().code, ErrorCode::kInvalidArgument);
  ASSERT_TRUE(recorder.on_instruction_begin("forward").has_value());
  auto nested = recorder.on_instruction_begin("backward");
  ASSERT_FALSE(nested.has_value());
  EXPECT_NE(nested.error().message.find("'forward' had not ended"), std::string::npos);
  auto wrong_end = recorder.on_instruction_end("backward");
  ASSERT_FALSE(wrong_end.has_value());
  EXPECT_NE(wrong_end.error().message.find("'backward' ended but 'forward'"), std::string::npos);
  EXPECT_EQ(recorder.on_step_end().error().code, ErrorCode::kInvalidArgument);
  // An abandoned step adds nothing and leaves the monitor ready for the next one.
  recorder.abandon_step();
  EXPECT_FALSE(monitor_->is_window_open("pfo:iteration"));
  EXPECT_EQ(recorder.iterations(), 0u);
  ASSERT_TRUE(recorder.on_step_begin().has_value());
  run(recorder, "forward", 0.1);
  ASSERT_TRUE(recorder.on_step_end().has_value());
  EXPECT_EQ(recorder.iterations(), 1u);
}

}  // namespace
}  // namespace zeus::pfo
