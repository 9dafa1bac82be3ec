// Drives the optimizer step by step on ReplayGpus and a FakeClock with a closed-form model:
// power = the limit L (the GPU would draw 1000 W), step time T(L) = 0.1 s * (1 + 0.2 x^2.5) with
// x = (300 - L) / 100. Per profiled window of n steps: E = n L T(L), time = n T(L), so every
// selector's winner is computed here from the formula, independently of the library.
#include "zeus/optimizer/power_limit_optimizer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "optimizer/power_limit/counter_monitor_for_test.h"
#include "zeus/device/replay_gpu.h"

namespace zeus {
namespace {

using testing_support::CounterMonitor;
using State = PowerLimitOptimizer::State;

double step_time_s(double limit_w) {
  return 0.1 * (1.0 + 0.2 * std::pow((300.0 - limit_w) / 100.0, 2.5));
}

std::vector<uint32_t> grid_w() { return {300, 275, 250, 225, 200, 175, 150, 125, 100}; }

// The winner by formula: argmin over the grid of cost(L) (ties to the higher limit).
template <typename Cost>
uint32_t expected_winner(Cost cost) {
  uint32_t best = 300;
  for (uint32_t l : grid_w()) {
    if (cost(l) < cost(best)) best = l;
  }
  return best;
}

class OptimizerTest : public ::testing::Test {
 protected:
  void add_gpus(int count, PowerLimitRangeMw range = {100'000, 300'000},
                const std::string& name = "Replay GPU") {
    for (int i = 0; i < count; ++i) {
      ReplayGpuConfig config;
      config.name = name;
      config.limit_range_mw = range;
      config.default_limit_mw = range.max_mw;
      config.power_model = ReplayGpu::capped_power_model(1000.0);
      config.physical_index = static_cast<int>(devices_.gpus.size());
      auto gpu = std::make_unique<ReplayGpu>(clock_, config);
      replay_.push_back(gpu.get());
      devices_.gpus.push_back(std::move(gpu));
      indices_.push_back(static_cast<int>(indices_.size()));
    }
    monitor_ = std::make_unique<CounterMonitor>(devices_, clock_, indices_);
  }

  Result<std::unique_ptr<PowerLimitOptimizer>> make(PowerLimitOptimizerOptions options) {
    options.handle_signals = false;
    return PowerLimitOptimizer::create(*monitor_, devices_, clock_, std::move(options));
  }

  // One training step: callbacks around the step's simulated duration at the current limit.
  void step(PowerLimitOptimizer& plo) {
    ASSERT_TRUE(plo.on_step_begin().has_value());
    const double limit_w = *devices_.gpus[0]->power_limit_mw() / 1000.0;
    clock_.advance_s(step_time_s(limit_w));
    ASSERT_TRUE(plo.on_step_end().has_value());
  }
  int run_until_done(PowerLimitOptimizer& plo) {
    int steps = 0;
    while (plo.state() != State::kDone && steps < 10'000) {
      step(plo);
      ++steps;
    }
    return steps;
  }

  std::vector<uint32_t> history_w(int gpu = 0) const {
    std::vector<uint32_t> out;
    for (uint32_t mw : replay_[gpu]->power_limit_history_mw()) out.push_back(mw / 1000);
    return out;
  }
  // What the device must have seen: max at start, the grid below it, then the optimum.
  static std::vector<uint32_t> expected_history(uint32_t optimum_w) {
    std::vector<uint32_t> h = grid_w();
    if (optimum_w != 100) h.push_back(optimum_w);
    return h;
  }

  FakeClock clock_;
  Devices devices_;
  std::vector<ReplayGpu*> replay_;
  std::vector<int> indices_;
  std::unique_ptr<CounterMonitor> monitor_;
};

TEST_F(OptimizerTest, ZeusCostForEachEtaSelectsTheAnalyticOptimumAndSetsTheExactSequence) {
  std::set<uint32_t> winners;
  for (double eta : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    SCOPED_TRACE("eta " + std::to_string(eta));
    devices_.gpus.clear(), replay_.clear(), indices_.clear();
    add_gpus(1);
    const uint32_t expected = expected_winner([&](uint32_t l) {
      return 40 * step_time_s(l) * (eta * l + (1 - eta) * 300.0);
    });
    winners.insert(expected);
    {
      PowerLimitOptimizerOptions options;
      options.selector = *PowerLimitSelector::zeus_cost(eta);
      auto plo = make(options);
      ASSERT_TRUE(plo.has_value()) << plo.error().to_string();
      EXPECT_EQ((*plo)->candidates(), grid_w());
      EXPECT_EQ((*plo)->state(), State::kReady);
      const int steps = run_until_done(**plo);
      EXPECT_EQ(steps, 1 + 9 * 50);  // wait 1 step (it starts warm-up), then 10 + 40 per limit
      EXPECT_EQ((*plo)->optimal_setting(), expected);
      ASSERT_EQ((*plo)->measurements().size(), 9u);
      for (const KnobMeasurement& m : (*plo)->measurements()) {
        EXPECT_NEAR(m.time_s, 40 * step_time_s(m.setting), 1e-9);
        EXPECT_NEAR(m.energy_j, 40 * step_time_s(m.setting) * m.setting, 2e-3);
      }
      EXPECT_EQ(history_w(), expected_history(expected));
      // Done: further steps change nothing.
      step(**plo);
      EXPECT_EQ(history_w(), expected_history(expected));
    }
    // Destroyed: back at the maximum.
    EXPECT_EQ(*devices_.gpus[0]->power_limit_mw(), 300'000u);
    if (expected != 300) {
      EXPECT_EQ(history_w().back(), 300u);
    }
  }
  // The model separates the five etas.
  EXPECT_EQ(winners.size(), 5u);
}

TEST_F(OptimizerTest, EnergyTimeAndSlowdownSelectors) {
  struct Case {
    PowerLimitSelector selector;
    uint32_t expected;
  };
  const double t300 = step_time_s(300);
  auto lowest_within = [&](double factor) {
    uint32_t best = 300;
    for (uint32_t l : grid_w()) {
      if (step_time_s(l) <= factor * t300) best = std::min(best, l);
    }
    return best;
  };
  const std::vector<Case> cases = {
      {PowerLimitSelector::min_energy(),
       expected_winner([](uint32_t l) { return l * step_time_s(l); })},
      {PowerLimitSelector::min_time(), expected_winner([](uint32_t l) { return step_time_s(l); })},
      {*PowerLimitSelector::max_slowdown(1.1), lowest_within(1.1)},
      {*PowerLimitSelector::max_slowdown(1.5), lowest_within(1.5)},
  };
  EXPECT_EQ(cases[2].expected, 225u);  // hand check: x^2.5 <= 0.5 -> x <= 0.758 -> L >= 224.2
  for (const Case& c : cases) {
    SCOPED_TRACE(c.selector.name());
    devices_.gpus.clear(), replay_.clear(), indices_.clear();
    add_gpus(1);
    PowerLimitOptimizerOptions options;
    options.selector = c.selector;
    auto plo = make(options);
    ASSERT_TRUE(plo.has_value());
    run_until_done(**plo);
    EXPECT_EQ((*plo)->optimal_setting(), c.expected);
    EXPECT_EQ(history_w(), expected_history(c.expected));
  }
}

TEST_F(OptimizerTest, EpochEndDuringProfilingCancelsRestoresAndReprofiles) {
  add_gpus(1);
  PowerLimitOptimizerOptions options;
  options.selector = PowerLimitSelector::min_energy();
  auto plo = make(options);
  ASSERT_TRUE(plo.has_value());
  // 1 + 50 (300 W) + 50 (275 W) + 10 warm-up + 5 profiling steps at 250 W.
  for (int i = 0; i < 1 + 50 + 50 + 10 + 5; ++i) step(**plo);
  EXPECT_EQ((*plo)->state(), State::kProfiling);
  EXPECT_EQ((*plo)->current_setting(), 250u);
  ASSERT_TRUE((*plo)->on_epoch_end().has_value());
  EXPECT_EQ((*plo)->state(), State::kReady);
  EXPECT_EQ(monitor_->cancelled, std::vector<std::string>{"__PowerLimitOptimizer_250"});
  EXPECT_EQ(*devices_.gpus[0]->power_limit_mw(), 300'000u);
  // Interrupted during warm-up of 250 W next time (no window is open then).
  ASSERT_TRUE((*plo)->on_epoch_begin().has_value());
  for (int i = 0; i < 3; ++i) step(**plo);
  EXPECT_EQ((*plo)->state(), State::kWarmup);
  ASSERT_TRUE((*plo)->on_epoch_end().has_value());
  EXPECT_EQ(monitor_->cancelled.size(), 1u);
  run_until_done(**plo);
  const std::vector<uint32_t> expected_start = {300, 275, 250, 300, 250, 300, 250, 225};
  const std::vector<uint32_t> h = history_w();
  ASSERT_GE(h.size(), expected_start.size());
  EXPECT_EQ(std::vector<uint32_t>(h.begin(), h.begin() + 8), expected_start);
  // 250 W measured once, over a full window.
  ASSERT_EQ((*plo)->measurements().size(), 9u);
  EXPECT_EQ((*plo)->measurements()[2].setting, 250u);
  EXPECT_NEAR((*plo)->measurements()[2].time_s, 40 * step_time_s(250), 1e-9);
  // Epoch ends while Ready or Done change nothing.
  const auto before = history_w();
  ASSERT_TRUE((*plo)->on_epoch_end().has_value());
  EXPECT_EQ(history_w(), before);
}

TEST_F(OptimizerTest, FailingCustomSelectorLeavesTheMaximumAndIsRetriedAtTheNextStep) {
  add_gpus(1);
  int calls = 0;
  uint32_t answer = 123;  // not measured: refused
  PowerLimitOptimizerOptions options;
  options.selector = *PowerLimitSelector::custom(
      "custom:Flaky", [&](std::span<const KnobMeasurement>, double) -> Result<uint32_t> {
        ++calls;
        if (calls == 1) return fail(ErrorCode::kUnavailable, "raised");
        return answer;
      });
  auto plo = make(options);
  ASSERT_TRUE(plo.has_value());
  // 1 + 9 x 50 step begins measure every limit; the last one selects, and the selector fails.
  for (int i = 0; i < 1 + 9 * 50 - 1; ++i) step(**plo);
  EXPECT_EQ(*devices_.gpus[0]->power_limit_mw(), 100'000u);  // profiling the last limit
  auto raised = (*plo)->on_step_begin();
  ASSERT_FALSE(raised.has_value());
  EXPECT_EQ(raised.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(raised.error().message.find("custom:Flaky failed: raised; the GPUs are at the maximum"),
            std::string::npos) << raised.error().message;
  EXPECT_EQ(*devices_.gpus[0]->power_limit_mw(), 300'000u);
  EXPECT_NE((*plo)->state(), State::kDone);
  EXPECT_EQ((*plo)->optimal_setting(), std::nullopt);
  ASSERT_EQ((*plo)->measurements().size(), 9u);
  // An epoch end while the selection is pending changes nothing.
  ASSERT_TRUE((*plo)->on_epoch_end().has_value());
  EXPECT_EQ(*devices_.gpus[0]->power_limit_mw(), 300'000u);
  // Retried at the next step: a setting that was not measured is refused, GPUs at the maximum.
  auto refused = (*plo)->on_step_begin();
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message.find("chose 123, which is not a measured setting"),
            std::string::npos) << refused.error().message;
  EXPECT_EQ(*devices_.gpus[0]->power_limit_mw(), 300'000u);
  // A measured one is set, and the measurements were not taken again.
  answer = 175;
  ASSERT_TRUE((*plo)->on_step_begin().has_value());
  EXPECT_EQ((*plo)->state(), State::kDone);
  EXPECT_EQ((*plo)->optimal_setting(), 175u);
  EXPECT_EQ(*devices_.gpus[0]->power_limit_mw(), 175'000u);
  EXPECT_EQ((*plo)->measurements().size(), 9u);
  EXPECT_EQ(calls, 3);
  step(**plo);
  EXPECT_EQ(calls, 3);
}

TEST_F(OptimizerTest, MultiGpuSameLimitEnergySummed) {
  add_gpus(2);
  auto plo = make({});
  ASSERT_TRUE(plo.has_value());
  run_until_done(**plo);
  EXPECT_EQ(history_w(0), history_w(1));
  for (const KnobMeasurement& m : (*plo)->measurements()) {
    EXPECT_NEAR(m.energy_j, 2 * 40 * step_time_s(m.setting) * m.setting, 4e-3);
  }
  // MaxPower = 300 W x 2 GPUs: the same winner as one GPU at eta = 0.5.
  EXPECT_EQ((*plo)->optimal_setting(), expected_winner([](uint32_t l) {
              return step_time_s(l) * (0.5 * 2 * l + 0.5 * 600.0);
            }));
  EXPECT_EQ((*plo)->profile().gpu_count, 2u);
}

TEST_F(OptimizerTest, AllReduceResultDrivesTheSelection) {
  add_gpus(1);
  PowerLimitOptimizerOptions options;
  options.selector = *PowerLimitSelector::zeus_cost(0.5);
  int calls = 0;
  // Three ranks: the others are 10% slower at 175 W and below and have the same energy.
  options.all_reduce = [&](const RankSample& local) -> Result<RankSample> {
    ++calls;
    const double limit_w = local.energy_j / local.time_s;
    const double other_time_s = limit_w < 180 ? local.time_s * 1.1 : local.time_s;
    return RankSample{local.energy_j * 3, std::max(local.time_s, other_time_s),
                      local.gpu_count * 3};
  };
  auto plo = make(options);
  ASSERT_TRUE(plo.has_value());
  run_until_done(**plo);
  EXPECT_EQ(calls, 9);
  const uint32_t expected = expected_winner([](uint32_t l) {
    const double t = 40 * step_time_s(l) * (l < 180 ? 1.1 : 1.0);
    return 0.5 * 3 * 40 * step_time_s(l) * l + 0.5 * 900.0 * t;
  });
  EXPECT_EQ((*plo)->optimal_setting(), expected);
  EXPECT_EQ((*plo)->profile().gpu_count, 3u);
  EXPECT_NEAR((*plo)->measurements()[0].energy_j, 3 * 40 * step_time_s(300) * 300, 1e-2);
}

TEST_F(OptimizerTest, ObserverModeKeepsTheMaximumAndReports) {
  add_gpus(1);
  PowerLimitOptimizerOptions options;
  options.observer = true;
  options.selector = PowerLimitSelector::min_energy();
  auto plo = make(options);
  ASSERT_TRUE(plo.has_value());
  run_until_done(**plo);
  const uint32_t expected = expected_winner([](uint32_t l) { return l * step_time_s(l); });
  EXPECT_EQ((*plo)->optimal_setting(), expected);
  EXPECT_EQ(*devices_.gpus[0]->power_limit_mw(), 300'000u);
  std::vector<uint32_t> h = grid_w();
  h.push_back(300);
  EXPECT_EQ(history_w(), h);
  auto report = (*plo)->observer_report();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->optimal_setting, expected);
  EXPECT_EQ(report->at_maximum.setting, 300u);
  const double e_max = 40 * step_time_s(300) * 300, e_opt = 40 * step_time_s(expected) * expected;
  EXPECT_NEAR(report->energy_saving_ratio, 1 - e_opt / e_max, 1e-6);
  EXPECT_NEAR(report->time_increase_ratio, step_time_s(expected) / step_time_s(300) - 1, 1e-9);
}

TEST_F(OptimizerTest, ProfileInSecondsInsteadOfSteps) {
  add_gpus(1);
  PowerLimitOptimizerOptions options;
  options.warmup_s = 1.0;
  options.profile_s = 5.0;
  options.candidates = {300, 200};
  auto plo = make(options);
  ASSERT_TRUE(plo.has_value());
  run_until_done(**plo);
  ASSERT_EQ((*plo)->measurements().size(), 2u);
  for (const KnobMeasurement& m : (*plo)->measurements()) {
    // Whole steps until 5 s have passed: at least 5 s, less than one step more.
    EXPECT_GE(m.time_s, 5.0 - 1e-9) << m.setting;
    EXPECT_LT(m.time_s, 5.0 + step_time_s(m.setting)) << m.setting;
    EXPECT_NEAR(m.energy_j / m.time_s, m.setting, 1e-3);
  }
}

TEST_F(OptimizerTest, RealMonitorLogReplaysToTheSameDecision) {
  add_gpus(2);
  const std::string log_path = (std::filesystem::temp_directory_path() /
                                ("zeus_plo_log_" + std::to_string(::getpid()) + ".csv"))
                                   .string();
  EnergyMonitorOptions monitor_options;
  monitor_options.log_file = log_path;
  auto monitor = EnergyMonitor::create(devices_, clock_, monitor_options);
  ASSERT_TRUE(monitor.has_value()) << monitor.error().to_string();
  PowerLimitOptimizerOptions options;
  options.handle_signals = false;
  options.selector = *PowerLimitSelector::zeus_cost(0.75);
  {
    auto plo = PowerLimitOptimizer::create(**monitor, devices_, clock_, options);
    ASSERT_TRUE(plo.has_value()) << plo.error().to_string();
    run_until_done(**plo);
    ASSERT_TRUE((*plo)->on_epoch_end().has_value());
    auto replayed = power_profile_from_monitor_log(log_path);
    ASSERT_TRUE(replayed.has_value()) << replayed.error().to_string();
    EXPECT_EQ(replayed->gpu_count, 2u);
    ASSERT_EQ(replayed->measurements.size(), (*plo)->measurements().size());
    for (size_t i = 0; i < replayed->measurements.size(); ++i) {
      EXPECT_EQ(replayed->measurements[i].setting, (*plo)->measurements()[i].setting);
      EXPECT_NEAR(replayed->measurements[i].energy_j, (*plo)->measurements()[i].energy_j, 1e-6);
    }
    EXPECT_EQ(*options.selector->select(replayed->measurements, profile_max_power_w(*replayed)),
              *(*plo)->optimal_setting());
    EXPECT_EQ((*plo)->optimal_setting(), expected_winner([](uint32_t l) {
                return step_time_s(l) * (0.75 * l + 0.25 * 300.0);
              }));
  }
  std::filesystem::remove(log_path);
}

}  // namespace
}  // namespace zeus
