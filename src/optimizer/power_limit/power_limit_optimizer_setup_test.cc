// The optimizer's construction, saved profiles, the SM-clock knob, device errors and restore
// paths, on ReplayGpus and a FakeClock.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "optimizer/power_limit/counter_monitor_for_test.h"
#include "zeus/device/replay_gpu.h"
#include "zeus/optimizer/power_limit_optimizer.h"

namespace zeus {
namespace {

using testing_support::CounterMonitor;
using State = PowerLimitOptimizer::State;
namespace fs = std::filesystem;

class SetupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("zeus_plo_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ReplayGpu* add_gpu(PowerLimitRangeMw range = {100'000, 300'000},
                     const std::string& name = "Replay GPU", ReplayPowerModel model = {}) {
    ReplayGpuConfig config;
    config.name = name;
    config.limit_range_mw = range;
    config.default_limit_mw = range.max_mw;
    config.power_model = model ? model : ReplayGpu::capped_power_model(1000.0);
    auto gpu = std::make_unique<ReplayGpu>(clock_, config);
    ReplayGpu* raw = gpu.get();
    devices_.gpus.push_back(std::move(gpu));
    indices_.push_back(static_cast<int>(indices_.size()));
    monitor_ = std::make_unique<CounterMonitor>(devices_, clock_, indices_);
    return raw;
  }

  Result<std::unique_ptr<PowerLimitOptimizer>> make(PowerLimitOptimizerOptions options) {
    options.handle_signals = false;
    return PowerLimitOptimizer::create(*monitor_, devices_, clock_, std::move(options));
  }

  // Step time 0.1 s at any setting; with a time-independent model, E = P x 0.1 s per step.
  void run_until_done(PowerLimitOptimizer& plo) {
    for (int i = 0; i < 10'000 && plo.state() != State::kDone; ++i) {
      ASSERT_TRUE(plo.on_step_begin().has_value());
      clock_.advance_s(0.1);
      ASSERT_TRUE(plo.on_step_end().has_value());
    }
  }

  fs::path dir_;
  FakeClock clock_;
  Devices devices_;
  std::vector<int> indices_;
  std::unique_ptr<CounterMonitor> monitor_;
};

void expect_invalid(const Result<std::unique_ptr<PowerLimitOptimizer>>& r,
                    const std::string& needle) {
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find(needle), std::string::npos) << r.error().message;
}

TEST_F(SetupTest, RejectsBadOptions) {
  add_gpu();
  PowerLimitOptimizerOptions zero_steps;
  zero_steps.profile_steps = 0;
  expect_invalid(make(zero_steps), "profile_steps");
  PowerLimitOptimizerOptions zero_seconds;
  zero_seconds.profile_s = 0.0;
  expect_invalid(make(zero_seconds), "profile_s");
  PowerLimitOptimizerOptions zero_step_w;
  zero_step_w.step_w = 0;
  expect_invalid(make(zero_step_w), "step");
  PowerLimitOptimizerOptions outside;
  outside.candidates = {350};
  expect_invalid(make(outside), "350 W");
  // Nothing was set by the failed constructions.
  EXPECT_TRUE(static_cast<ReplayGpu&>(*devices_.gpus[0]).power_limit_history_mw().empty());
}

TEST_F(SetupTest, RejectsGpusWithDifferentLimitRanges) {
  add_gpu({100'000, 300'000});
  add_gpu({150'000, 300'000});
  expect_invalid(make({}), "share one power limit range");
}

TEST_F(SetupTest, GridIncludesTheMinimumOnlyOnTheGrid) {
  add_gpu({115'000, 260'000});
  auto plo = make({});
  ASSERT_TRUE(plo.has_value());
  EXPECT_EQ((*plo)->candidates(), (std::vector<uint32_t>{260, 235, 210, 185, 160, 135}));
  plo->reset();  // before its GPU goes away
  devices_.gpus.clear(), indices_.clear();
  add_gpu({110'000, 260'000});  // 260 - 6 x 25 = 110: the minimum is on the grid
  auto on_grid = make({});
  ASSERT_TRUE(on_grid.has_value());
  EXPECT_EQ((*on_grid)->candidates().back(), 110u);
  PowerLimitOptimizerOptions explicit_list;
  explicit_list.candidates = {150, 260, 200, 150};
  auto plo2 = make(explicit_list);
  ASSERT_TRUE(plo2.has_value());
  EXPECT_EQ((*plo2)->candidates(), (std::vector<uint32_t>{260, 200, 150}));
}

TEST_F(SetupTest, SavesTheProfileAndTheNextRunSkipsProfiling) {
  ReplayGpu* gpu = add_gpu();
  PowerLimitOptimizerOptions options;
  options.profile_path = (dir_ / "profile.json").string();
  options.candidates = {300, 200, 100};
  options.selector = PowerLimitSelector::min_energy();
  uint32_t chosen = 0;
  {
    auto plo = make(options);
    ASSERT_TRUE(plo.has_value());
    run_until_done(**plo);
    chosen = *(*plo)->optimal_setting();
  }
  EXPECT_EQ(chosen, 100u);  // power = limit, same time: the lowest limit uses the least energy
  auto saved = load_power_profile(options.profile_path);
  ASSERT_TRUE(saved.has_value()) << saved.error().to_string();
  EXPECT_EQ(saved->gpu_model, "Replay GPU");
  EXPECT_EQ(saved->measurements.size(), 3u);

  const size_t before = gpu->power_limit_history_mw().size();
  auto again = make(options);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ((*again)->state(), State::kDone);
  EXPECT_EQ((*again)->optimal_setting(), 100u);
  EXPECT_TRUE(monitor_->begun.size() == 3u);  // no new window
  const auto h = gpu->power_limit_history_mw();
  EXPECT_EQ(std::vector<uint32_t>(h.begin() + before, h.end()),
            (std::vector<uint32_t>{300'000, 100'000}));
}

TEST_F(SetupTest, ProfileForAnotherGpuModelIsAnError) {
  add_gpu({100'000, 300'000}, "NVIDIA A40");
  PowerProfile other;
  other.gpu_model = "Tesla V100-SXM2-32GB";
  other.measurements = {{250, 100, 1}};
  const std::string path = (dir_ / "v100.json").string();
  ASSERT_TRUE(save_power_profile(path, other).has_value());
  PowerLimitOptimizerOptions options;
  options.profile_path = path;
  expect_invalid(make(options), "Tesla V100-SXM2-32GB");
}

TEST_F(SetupTest, DamagedProfileIsIgnoredAndReplaced) {
  add_gpu();
  fs::create_directories(dir_);
  const std::string path = (dir_ / "damaged.json").string();
  std::ofstream(path) << "{\"measurements\": [{\"power_limit\": 300, \"ener";
  PowerLimitOptimizerOptions options;
  options.profile_path = path;
  options.candidates = {300, 250};
  auto plo = make(options);
  ASSERT_TRUE(plo.has_value());
  EXPECT_EQ((*plo)->state(), State::kReady);
  run_until_done(**plo);
  auto saved = load_power_profile(path);
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->measurements.size(), 2u);
}

TEST_F(SetupTest, SmClockKnobProfilesSupportedClocks) {
  // Power 50 + 250 r^2 W and step time 0.1 / r s with r = f / 1410: E per step =
  // 0.1 (50 / r + 250 r), lowest at the lowest supported clock (600 MHz) for this grid.
  ReplayGpu* gpu = add_gpu({100'000, 300'000}, "Replay GPU",
                           [](double, uint32_t, uint32_t locked_mhz) {
                             const double r = (locked_mhz == 0 ? 1410 : locked_mhz) / 1410.0;
                             return 50 + 250 * r * r;
                           });
  PowerLimitOptimizerOptions options;
  options.knob = OptimizerKnob::kSmClock;
  options.selector = PowerLimitSelector::min_energy();
  options.warmup_steps = 1;
  options.profile_steps = 4;
  {
    auto plo = make(options);
    ASSERT_TRUE(plo.has_value()) << plo.error().to_string();
    EXPECT_EQ((*plo)->candidates(), (std::vector<uint32_t>{1410, 1200, 1000, 800, 600}));
    uint32_t locked = 0;
    for (int i = 0; i < 1000 && (*plo)->state() != State::kDone; ++i) {
      ASSERT_TRUE((*plo)->on_step_begin().has_value());
      const auto history = gpu->sm_clock_history_mhz();
      locked = history.empty() || history.back().max_mhz == 0 ? 1410 : history.back().max_mhz;
      clock_.advance_s(0.1 * 1410.0 / locked);
    }
    EXPECT_EQ((*plo)->optimal_setting(), 600u);
    EXPECT_EQ((*plo)->profile().knob, OptimizerKnob::kSmClock);
    EXPECT_EQ((*plo)->profile().max_power_w, 300.0);
  }
  const std::vector<ClockLockMhz> expected = {{0, 0},      {600, 1410}, {600, 1200}, {600, 1000},
                                              {600, 800},  {600, 600},  {0, 0}};
  EXPECT_EQ(gpu->sm_clock_history_mhz(), expected);
  EXPECT_TRUE(gpu->power_limit_history_mw().empty());
}

TEST_F(SetupTest, PermissionDeniedNamesTheFix) {
  ReplayGpu* gpu = add_gpu();
  gpu->set_deny_control(true);
  auto plo = make({});
  ASSERT_FALSE(plo.has_value());
  EXPECT_EQ(plo.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(plo.error().message.find("CAP_SYS_ADMIN"), std::string::npos) << plo.error().message;
  EXPECT_NE(plo.error().message.find("GPU 0"), std::string::npos);
}

TEST_F(SetupTest, FailedTransitionIsRetriedAtTheNextStep) {
  ReplayGpu* gpu = add_gpu();
  PowerLimitOptimizerOptions options;
  options.candidates = {300, 250};
  options.warmup_steps = 1;
  options.profile_steps = 2;
  auto plo = make(options);
  ASSERT_TRUE(plo.has_value());
  // Step 1 starts warm-up at 300 W, step 2 opens the window, step 4 closes it.
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*plo)->on_step_begin().has_value());
  EXPECT_EQ((*plo)->state(), State::kProfiling);
  monitor_->end_error = Error{ErrorCode::kUnavailable, "GPU lost"};
  auto failed = (*plo)->on_step_begin();
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ((*plo)->state(), State::kReady);
  EXPECT_TRUE((*plo)->measurements().empty());
  monitor_->end_error.reset();
  run_until_done(**plo);
  ASSERT_EQ((*plo)->measurements().size(), 2u);
  EXPECT_EQ((*plo)->measurements()[0].setting, 300u);
  EXPECT_EQ(monitor_->begun, (std::vector<std::string>{"__PowerLimitOptimizer_300",
                                                       "__PowerLimitOptimizer_300",
                                                       "__PowerLimitOptimizer_250"}));
  EXPECT_EQ(gpu->power_limit_history_mw(), (std::vector<uint32_t>{300'000, 250'000}));
}

TEST_F(SetupTest, RestoresOnExceptionAndOnExplicitRestore) {
  ReplayGpu* gpu = add_gpu();
  PowerLimitOptimizerOptions options;
  options.candidates = {300, 200};
  options.warmup_steps = 1;
  try {
    auto plo = make(options);
    ASSERT_TRUE(plo.has_value());
    for (int i = 0; i < 60; ++i) ASSERT_TRUE((*plo)->on_step_begin().has_value());
    EXPECT_EQ(*gpu->power_limit_mw(), 200'000u);
    throw std::runtime_error("training crashed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(*gpu->power_limit_mw(), 300'000u);
  EXPECT_TRUE(monitor_->is_window_open("__PowerLimitOptimizer_200") == false);

  auto plo = make(options);
  ASSERT_TRUE(plo.has_value());
  for (int i = 0; i < 60; ++i) ASSERT_TRUE((*plo)->on_step_begin().has_value());
  ASSERT_TRUE((*plo)->restore().has_value());
  EXPECT_EQ(*gpu->power_limit_mw(), 300'000u);
  const size_t calls = gpu->power_limit_history_mw().size();
  ASSERT_TRUE((*plo)->restore().has_value());  // idempotent, no driver call
  EXPECT_EQ(gpu->power_limit_history_mw().size(), calls);
}

}  // namespace
}  // namespace zeus
