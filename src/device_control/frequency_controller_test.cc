// FrequencyController on a ReplayGpu (what it locks, in order) and on the fake libnvidia-ml.so.1
// (a GPU without memory clock locking, a GPU that refuses, restore on stop/destructor/exception).
// Signals and exit() are in frequency_controller_signal_test.cc.
#include "zeus/device_control/frequency_controller.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <stdexcept>

#include "device/nvml/nvml_gpu.h"
#include "testing/fake_nvml_state.h"
#include "zeus/device/replay_gpu.h"

namespace zeus {
namespace {

using testing::FakeNvmlDevice;
using testing::FakeNvmlEnvironment;

// Holds the controller's thread inside its next device call while armed (the ReplayGpu calls
// its power model when time has passed since its last update).
struct Gate {
  std::mutex mutex;
  std::condition_variable cv;
  bool armed = false;
  bool entered = false;

  void pass() {
    std::unique_lock<std::mutex> lock(mutex);
    if (!armed) return;
    entered = true;
    cv.notify_all();
    cv.wait(lock, [&] { return !armed; });
  }
  void wait_entered() {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return entered; });
  }
  void open() {
    std::lock_guard<std::mutex> lock(mutex);
    armed = false;
    cv.notify_all();
  }
};

class FrequencyControllerTest : public ::testing::Test {
 protected:
  FrequencyControllerTest() {
    ReplayGpuConfig config;
    config.supported_sm_clocks_mhz = {600, 1410, 800, 1200, 1000};  // any order
    config.supported_memory_clocks_mhz = {1215, 877};
    config.power_model = [this](double, uint32_t, uint32_t) {
      gate_.pass();
      return 200.0;
    };
    gpu_ = std::make_unique<ReplayGpu>(clock_, config);
  }

  std::vector<ClockLockMhz> sm_history() const { return gpu_->sm_clock_history_mhz(); }
  static ClockLockMhz at(uint32_t mhz) { return {mhz, mhz}; }

  FakeClock clock_;
  Gate gate_;
  std::unique_ptr<ReplayGpu> gpu_;
  FrequencyControllerOptions options_{.handle_signals = false};
};

TEST_F(FrequencyControllerTest, StartResetsThePowerLimitAndLocksMemoryAndSmAtTheirMaximum) {
  ASSERT_TRUE(gpu_->set_power_limit_mw(150'000).has_value());
  auto controller = FrequencyController::start(*gpu_, options_);
  ASSERT_TRUE(controller.has_value()) << controller.error().to_string();
  EXPECT_EQ(gpu_->power_limit_mw().value(), 300'000u);  // the default
  EXPECT_EQ(gpu_->memory_clock_history_mhz(), (std::vector<ClockLockMhz>{at(1215)}));
  EXPECT_EQ(sm_history(), (std::vector<ClockLockMhz>{at(1410)}));
  EXPECT_EQ((*controller)->applied_mhz(), 1410u);
  EXPECT_EQ((*controller)->max_sm_clock_mhz(), 1410u);
  EXPECT_EQ((*controller)->max_memory_clock_mhz(), 1215u);
  EXPECT_TRUE((*controller)->memory_clock_locked());
  EXPECT_EQ((*controller)->supported_sm_clocks_mhz(),
            (std::vector<uint32_t>{1410, 1200, 1000, 800, 600}));
}

TEST_F(FrequencyControllerTest, AppliesRequestsInTheBackgroundAndRestoresAtStop) {
  auto controller = std::move(*FrequencyController::start(*gpu_, options_));
  controller->request(1000);
  controller->flush();
  EXPECT_EQ(controller->applied_mhz(), 1000u);
  controller->request(0);  // leave as is
  controller->request(600);
  controller->flush();
  ASSERT_TRUE(controller->stop().has_value());
  EXPECT_EQ(sm_history(), (std::vector<ClockLockMhz>{at(1410), at(1000), at(600), at(0)}));
  EXPECT_EQ(gpu_->memory_clock_history_mhz(), (std::vector<ClockLockMhz>{at(1215), at(0)}));
  EXPECT_EQ(controller->applied_mhz(), 0u);
  controller->request(800);                     // after stop: ignored
  ASSERT_TRUE(controller->stop().has_value());  // idempotent
  EXPECT_EQ(sm_history().size(), 4u);
  const FrequencyControllerStats stats = controller->stats();
  EXPECT_EQ(stats.requests, 2u);
  EXPECT_EQ(stats.applied, 2u);
  EXPECT_EQ(stats.failed, 0u);
  EXPECT_GE(stats.apply_max_s, 0.0);
  EXPECT_GE(stats.apply_total_s, stats.apply_max_s);
}

TEST_F(FrequencyControllerTest, OnlyTheNewestOfAFloodOfRequestsIsApplied) {
  auto controller = std::move(*FrequencyController::start(*gpu_, options_));
  {
    std::lock_guard<std::mutex> lock(gate_.mutex);
    gate_.armed = true;
  }
  clock_.advance_s(1.0);  // the next device call evaluates the power model
  controller->request(1200);
  gate_.wait_entered();  // the thread is inside lock_sm_clocks_mhz(1200)
  for (int i = 0; i < 10'000; ++i) controller->request(i % 2 == 0 ? 600 : 1000);
  controller->request(800);  // the newest
  gate_.open();
  controller->flush();
  EXPECT_EQ(sm_history(), (std::vector<ClockLockMhz>{at(1410), at(1200), at(800)}));
  const FrequencyControllerStats stats = controller->stats();
  EXPECT_EQ(stats.requests, 10'002u);
  EXPECT_EQ(stats.taken, 2u);
  EXPECT_EQ(stats.applied, 2u);
}

TEST_F(FrequencyControllerTest, SkipsAClockEqualToTheOneApplied) {
  auto controller = std::move(*FrequencyController::start(*gpu_, options_));
  for (uint32_t mhz : {1410u, 1000u, 1000u, 1000u, 600u, 600u}) {
    controller->request(mhz);
    controller->flush();
  }
  EXPECT_EQ(sm_history(), (std::vector<ClockLockMhz>{at(1410), at(1000), at(600)}));
  const FrequencyControllerStats stats = controller->stats();
  EXPECT_EQ(stats.requests, 6u);
  EXPECT_EQ(stats.taken, 6u);
  EXPECT_EQ(stats.applied, 2u);
  EXPECT_EQ(stats.skipped, 4u);  // 1410 at start, then 1000 twice and 600 once
}

TEST_F(FrequencyControllerTest, ARefusedClockIsCountedAndTheThreadCarriesOn) {
  auto controller = std::move(*FrequencyController::start(*gpu_, options_));
  controller->request(300);  // below the supported span: the GPU refuses
  controller->flush();
  controller->request(800);
  controller->flush();
  const FrequencyControllerStats stats = controller->stats();
  EXPECT_EQ(stats.failed, 1u);
  ASSERT_TRUE(stats.last_error.has_value());
  EXPECT_EQ(stats.last_error->code, ErrorCode::kInvalidArgument);
  EXPECT_NE(stats.last_error->message.find("300 MHz"), std::string::npos)
      << stats.last_error->message;
  EXPECT_EQ(controller->applied_mhz(), 800u);
}

TEST_F(FrequencyControllerTest, DestructorRestoresAlsoWhenAnExceptionUnwinds) {
  try {
    auto controller = std::move(*FrequencyController::start(*gpu_, options_));
    controller->request(600);
    controller->flush();
    throw std::runtime_error("training failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(sm_history(), (std::vector<ClockLockMhz>{at(1410), at(600), at(0)}));
  EXPECT_EQ(gpu_->memory_clock_history_mhz(), (std::vector<ClockLockMhz>{at(1215), at(0)}));
}

TEST_F(FrequencyControllerTest, WithoutPermissionStartFailsAndChangesNothing) {
  gpu_->set_deny_control(true);
  auto controller = FrequencyController::start(*gpu_, options_);
  ASSERT_FALSE(controller.has_value());
  EXPECT_EQ(controller.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(controller.error().message.find("power limit"), std::string::npos)
      << controller.error().message;
  gpu_->set_deny_control(false);
  EXPECT_TRUE(sm_history().empty());
  EXPECT_TRUE(gpu_->memory_clock_history_mhz().empty());
}

// Through the real NVML backend: a GPU whose memory clocks cannot be locked still gets its SM
// clocks controlled, and the fake's state shows every lock and the reset.
TEST(FrequencyControllerNvmlTest, MemoryLockNotSupportedIsIgnoredAndSmClocksAreLogged) {
  testing::FakeNvmlState initial;
  initial.devices = {FakeNvmlDevice::h100()};
  initial.devices[0].limit_mw = 400'000;
  initial.devices[0].errors = {{"nvmlDeviceSetMemoryLockedClocks", 3}};  // NOT_SUPPORTED
  initial.sm_clock_log.emplace();
  FakeNvmlEnvironment fake(initial);
  auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
  ASSERT_TRUE(gpus.has_value()) << gpus.error().to_string();
  {
    auto controller = FrequencyController::start(*(*gpus)[0], {.handle_signals = false});
    ASSERT_TRUE(controller.has_value()) << controller.error().to_string();
    EXPECT_FALSE((*controller)->memory_clock_locked());
    const auto started = fake.read();
    EXPECT_EQ(started.devices[0].limit_mw, 700'000u);
    EXPECT_EQ(started.devices[0].locked_sm_clocks_mhz, std::make_pair(1980u, 1980u));
    for (uint32_t mhz : {1500u, 1500u, 900u, 1980u}) {
      (*controller)->request(mhz);
      (*controller)->flush();
    }
  }
  const auto state = fake.read();
  EXPECT_EQ(state.sm_clock_sequence_mhz(0), (std::vector<uint32_t>{1980, 1500, 900, 1980, 0}));
  EXPECT_FALSE(state.devices[0].locked_sm_clocks_mhz.has_value());
  EXPECT_FALSE(state.devices[0].locked_memory_clocks_mhz.has_value());
}

TEST(FrequencyControllerNvmlTest, AnSmLockErrorFailsStartAndUndoesTheMemoryLock) {
  FakeNvmlDevice device = FakeNvmlDevice::h100();
  device.errors = {{"nvmlDeviceSetGpuLockedClocks", 4}};  // NO_PERMISSION
  FakeNvmlEnvironment fake({device});
  auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
  ASSERT_TRUE(gpus.has_value()) << gpus.error().to_string();
  auto controller = FrequencyController::start(*(*gpus)[0], {.handle_signals = false});
  ASSERT_FALSE(controller.has_value());
  EXPECT_EQ(controller.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(controller.error().message.find("SM clock"), std::string::npos)
      << controller.error().message;
  const auto state = fake.read();
  EXPECT_FALSE(state.devices[0].locked_memory_clocks_mhz.has_value());  // undone
  EXPECT_FALSE(state.devices[0].locked_sm_clocks_mhz.has_value());
}

}  // namespace
}  // namespace zeus
