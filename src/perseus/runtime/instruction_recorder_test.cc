#include "perseus/runtime/instruction_recorder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "zeus/device/replay_gpu.h"

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

// An H200 publishes its energy counter every ~100 ms: 20-30 ms instructions read 0 J from the raw
// counter most of the time (what the first real-GPU run of the kit found). With the counter
// interpolated between its published values, every instruction gets its share.
TEST_F(InstructionRecorderTest, InstructionsShorterThanTheCounterStepGetTheirShare) {
  int reads = 0;
  EnergyCounter counter{&clock_, [this, &reads]() -> Result<double> {
                          ++reads;
                          return 200.0 * 0.1 * std::floor(clock_.now_s() / 0.1 + 1e-9);
                        }};
  InstructionRecorder recorder(*monitor_, 0, {}, counter);
  for (int step = 0; step < 20; ++step) {
    ASSERT_TRUE(recorder.on_step_begin().has_value());
    run(recorder, "forward", 0.02);
    run(recorder, "backward", 0.03);
    ASSERT_TRUE(recorder.on_step_end().has_value());
  }
  // The last instruction ends at 1.39 s, the step at 1.4 s when the counter publishes: take()
  // needs no wait. One more step ends at 1.47 s: it waits for the publish at 1.5 s.
  ASSERT_TRUE(recorder.on_step_begin().has_value());
  run(recorder, "forward", 0.02);
  run(recorder, "backward", 0.03);
  ASSERT_TRUE(recorder.on_step_end().has_value());
  const double before_take_s = clock_.now_s();
  const ProfilingResult result = recorder.take();
  EXPECT_NEAR(before_take_s, 1.47, 1e-9);
  EXPECT_NEAR(clock_.now_s(), 1.5, 0.0015);
  EXPECT_GE(reads, 21 * 6);
  for (const auto& [name, seconds] : {std::pair<std::string, double>{"forward", 0.02},
                                      {"backward", 0.03}}) {
    double sum = 0;
    int n = 0;
    for (size_t i = 0; i < 20; ++i) {
      ASSERT_EQ(result.energy_breakdown.at(name)[i].size(), 1u);
      EXPECT_NEAR(result.time_breakdown.at(name)[i][0], seconds, 1e-9);
      const double e = result.energy_breakdown.at(name)[i][0];
      if (i >= 2) {  // steps 0 and 1 precede the counter's first change (at 0.1 s)
        EXPECT_GT(e, 0.0) << name << " in step " << i;
      }
      sum += e;
      ++n;
    }
    EXPECT_NEAR(sum / n, 200.0 * seconds, 200.0 * seconds * 0.15) << name;
  }
  // The iteration's energy is still the monitor's.
  EXPECT_NEAR(result.iter_energy[5], 200.0 * 0.07, 1e-3);
}

}  // namespace
}  // namespace zeus::pfo
