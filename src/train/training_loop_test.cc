#include "zeus/train/training_loop.h"

#include <gtest/gtest.h>

#include <cmath>

#include "zeus/device/replay_gpu.h"
#include "zeus/optimizer/batch_size_optimizer.h"
#include "zeus/optimizer/bso_store.h"

namespace zeus {
namespace {

// A job whose epochs take 60 steps; a step's time depends on the power limit, and the metric
// reaches the target after epochs_to_target(b) epochs (never for b = 128).
class TrainingLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ReplayGpuConfig config;
    config.limit_range_mw = {100'000, 300'000};
    config.default_limit_mw = 300'000;
    config.power_model = ReplayGpu::capped_power_model(250.0);
    auto gpu = std::make_unique<ReplayGpu>(clock_, config);
    gpu_ = gpu.get();
    devices_.gpus.push_back(std::move(gpu));
    monitor_ = std::move(*EnergyMonitor::create(devices_, clock_, {.cpu_indices = std::vector<int>{}}));
    store_ = make_memory_store();
    optimizer_ = std::make_unique<BatchSizeOptimizer>(*store_, [] { return uint64_t{7}; });
    service_ = make_local_batch_size_service(*optimizer_);
    spec_.job_id = "train-job-1";
    spec_.job_id_prefix = "train-job";
    spec_.batch_sizes = {32, 64, 128};
    spec_.default_batch_size = 64;
    spec_.max_power_w = 300.0;
    spec_.target_metric = 0.9;
    spec_.max_epochs = 8;
    spec_.mab_seed = 1;
  }

  static int epochs_to_target(int batch_size) {
    return batch_size == 32 ? 3 : batch_size == 64 ? 4 : 1000;
  }

  double step_time_s() const {
    const double limit_w = *gpu_->power_limit_mw() / 1000.0;
    return 0.1 * std::sqrt(300.0 / limit_w);
  }

  TrainingLoopOptions options() const {
    TrainingLoopOptions o;
    o.job = spec_;
    o.power_limit.warmup_steps = 2;
    o.power_limit.profile_steps = 5;
    o.power_limit.step_w = 50;
    o.power_limit.handle_signals = false;
    return o;
  }

  // Trains one recurrence to its end (or `max_epochs_to_run` epochs); returns the loop.
  std::unique_ptr<TrainingLoop> run_recurrence(int max_epochs_to_run = 1000) {
    auto loop = TrainingLoop::create(*service_, *monitor_, devices_, clock_, options());
    EXPECT_TRUE(loop.has_value()) << loop.error().to_string();
    if (!loop) return nullptr;
    TrainingLoop& l = **loop;
    int expected_epoch = 0;
    for (int epoch : l.epochs()) {
      EXPECT_EQ(epoch, expected_epoch++);
      for (int step = 0; step < 60; ++step) {
        EXPECT_TRUE(l.on_step_begin().has_value());
        clock_.advance_s(step_time_s());
        EXPECT_TRUE(l.on_step_end().has_value());
      }
      const double metric = 0.9 * (epoch + 1) / epochs_to_target(l.batch_size());
      auto decision = l.report_metric(metric);
      EXPECT_TRUE(decision.has_value()) << decision.error().to_string();
      if (epoch + 1 >= max_epochs_to_run) break;
    }
    EXPECT_FALSE(l.error().has_value()) << l.error()->to_string();
    return std::move(*loop);
  }

  FakeClock clock_;
  ReplayGpu* gpu_ = nullptr;
  Devices devices_;
  std::unique_ptr<EnergyMonitor> monitor_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<BatchSizeOptimizer> optimizer_;
  std::unique_ptr<BatchSizeService> service_;
  JobSpec spec_;
};

TEST_F(TrainingLoopTest, FirstRecurrenceProfilesPowerAndStopsAtTarget) {
  const double energy_before_j = *gpu_->total_energy_mj() / 1000.0;
  const double start_s = clock_.now_s();
  auto loop = run_recurrence();
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->batch_size(), 64);  // pruning starts at the default
  EXPECT_EQ(loop->epochs_done(), 4);
  ASSERT_TRUE(loop->last_decision().has_value());
  EXPECT_TRUE(loop->last_decision()->stop_train);
  EXPECT_TRUE(loop->last_decision()->converged);
  // Time and energy are the whole trial's.
  EXPECT_NEAR(loop->time_s(), clock_.now_s() - start_s, 1e-6);
  EXPECT_NEAR(loop->energy_j(), *gpu_->total_energy_mj() / 1000.0 - energy_before_j, 1e-3 + 1e-6 * loop->energy_j());
  // The power-limit optimizer profiled 300, 250, ..., 100 W in the first epoch, then set its optimum.
  PowerLimitOptimizer* plo = loop->power_limit_optimizer();
  ASSERT_NE(plo, nullptr);
  EXPECT_EQ(plo->state(), PowerLimitOptimizer::State::kDone);
  EXPECT_EQ(plo->candidates(), (std::vector<uint32_t>{300, 250, 200, 150, 100}));
  ASSERT_TRUE(plo->optimal_setting().has_value());
  const auto history = gpu_->power_limit_history_mw();
  ASSERT_FALSE(history.empty());
  EXPECT_EQ(history.back(), *plo->optimal_setting() * 1000);
  // The store holds the trial as reported.
  auto job = optimizer_->get_job("train-job-1");
  ASSERT_TRUE(job.has_value());
  ASSERT_EQ(job->trials.size(), 1u);
  EXPECT_EQ(job->trials[0].status, TrialStatus::kConverged);
  EXPECT_NEAR(job->trials[0].time_s, loop->time_s(), 1e-9);
  EXPECT_NEAR(job->trials[0].energy_j, loop->energy_j(), 1e-9);
  EXPECT_EQ(job->trials[0].epochs, 4);
}

TEST_F(TrainingLoopTest, RecurrencesFollowPruningAndEarlyStop) {
  // The optimizer's default early stop is predictive: the training loop stops 128 before the
  // epoch that would cross β × min cost, the same rule the simulator replays.
  for (EarlyStopMode mode : {EarlyStopMode::kPredictive, EarlyStopMode::kAfterCrossing}) {
    SCOPED_TRACE(std::string(early_stop_mode_name(mode)));
    spec_.job_id = "train-job-" + std::string(early_stop_mode_name(mode));
    spec_.early_stop = mode;
    auto first = run_recurrence();
    auto second = run_recurrence();
    auto third = run_recurrence();
    ASSERT_TRUE(first && second && third);
    EXPECT_EQ(first->batch_size(), 64);
    EXPECT_EQ(second->batch_size(), 32);  // downward from the default first
    EXPECT_TRUE(second->last_decision()->converged);
    EXPECT_EQ(third->batch_size(), 128);  // then upward
    EXPECT_FALSE(third->last_decision()->converged);
    EXPECT_TRUE(third->stopped());
    EXPECT_LE(third->epochs_done(), spec_.max_epochs);
    const double cost_32 = 0.5 * second->energy_j() + 0.5 * 300.0 * second->time_s();
    const double cost_128 = 0.5 * third->energy_j() + 0.5 * 300.0 * third->time_s();
    const double bound = 2.0 * std::min(cost_32, 0.5 * first->energy_j() + 150.0 * first->time_s());
    if (third->epochs_done() == spec_.max_epochs) continue;
    if (mode == EarlyStopMode::kAfterCrossing) {
      EXPECT_GT(cost_128, bound - 1e-9);  // the crossing epoch was paid
    } else {
      // Within the bound, and one more epoch (at most the mean epoch, the first one profiling
      // and dearer) would have crossed it.
      EXPECT_LE(cost_128, bound + 1e-9);
      EXPECT_GT(cost_128 + cost_128 / third->epochs_done(), bound - 1e-9);
    }
  }
}

TEST_F(TrainingLoopTest, AbandonedRecurrenceIsMarkedFailed) {
  {
    auto loop = run_recurrence(/*max_epochs_to_run=*/1);
    ASSERT_NE(loop, nullptr);
    EXPECT_FALSE(loop->stopped());
  }  // destroyed mid-training
  auto job = optimizer_->get_job("train-job-1");
  ASSERT_TRUE(job.has_value());
  ASSERT_EQ(job->trials.size(), 1u);
  EXPECT_EQ(job->trials[0].status, TrialStatus::kFailed);
  // The GPU is back at its maximum limit after the optimizer is gone.
  EXPECT_EQ(*gpu_->power_limit_mw(), 300'000u);
}

TEST_F(TrainingLoopTest, ReportOutsideAnEpochIsAnError) {
  auto loop = TrainingLoop::create(*service_, *monitor_, devices_, clock_, options());
  ASSERT_TRUE(loop.has_value());
  auto report = (*loop)->report_metric(0.5);
  ASSERT_FALSE(report.has_value());
  EXPECT_EQ(report.error().code, ErrorCode::kInvalidArgument);
}

// Forwards to a service; its next `failures` reports fail as an unreachable server would.
class FlakyService final : public BatchSizeService {
 public:
  explicit FlakyService(BatchSizeService& inner) : inner_(inner) {}
  Result<JobSpec> register_job(const JobSpec& spec) override { return inner_.register_job(spec); }
  Result<TrialId> next_batch_size(std::string_view job_id) override {
    return inner_.next_batch_size(job_id);
  }
  Result<ReportDecision> report(const TrialReport& report) override {
    if (failures > 0) {
      --failures;
      return fail(ErrorCode::kUnavailable, "cannot reach the batch-size server");
    }
    reported_epochs.push_back(report.current_epoch);
    return inner_.report(report);
  }
  Result<void> end_trial(const TrialId& trial) override { return inner_.end_trial(trial); }
  int failures = 0;
  std::vector<int> reported_epochs;

 private:
  BatchSizeService& inner_;
};

TEST_F(TrainingLoopTest, AFailedReportLeavesTheEpochToReportAgain) {
  FlakyService flaky(*service_);
  TrainingLoopOptions o = options();
  o.optimize_power_limit = false;
  auto loop = TrainingLoop::create(flaky, *monitor_, devices_, clock_, o);
  ASSERT_TRUE(loop.has_value()) << loop.error().to_string();
  TrainingLoop& l = **loop;
  const double energy_before_j = *gpu_->total_energy_mj() / 1000.0;
  const double start_s = clock_.now_s();
  ASSERT_TRUE(l.next_epoch());
  clock_.advance_s(10);
  // A bad metric is refused before anything changes.
  auto refused = l.report_metric(std::nan(""));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message.find("finite"), std::string::npos);
  // The server cannot be reached: the epoch stays unreported and measuring.
  flaky.failures = 1;
  auto lost = l.report_metric(0.1);
  ASSERT_FALSE(lost.has_value());
  EXPECT_EQ(lost.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(l.epochs_done(), 0);
  clock_.advance_s(1);
  // Reported again: epoch 1, with all the time and energy measured so far.
  auto reported = l.report_metric(0.2);
  ASSERT_TRUE(reported.has_value()) << reported.error().to_string();
  EXPECT_EQ(l.epochs_done(), 1);
  EXPECT_EQ(flaky.reported_epochs, std::vector<int>{1});
  EXPECT_NEAR(l.time_s(), clock_.now_s() - start_s, 1e-6);
  EXPECT_NEAR(l.energy_j(), *gpu_->total_energy_mj() / 1000.0 - energy_before_j, 1e-3);
  // And training goes on as usual.
  ASSERT_TRUE(l.next_epoch());
  clock_.advance_s(10);
  ASSERT_TRUE(l.report_metric(0.3).has_value());
  EXPECT_EQ(flaky.reported_epochs, (std::vector<int>{1, 2}));
}

TEST_F(TrainingLoopTest, BadJobSpecIsRejectedBeforeTraining) {
  TrainingLoopOptions o = options();
  o.job.default_batch_size = 48;  // not in the list
  auto loop = TrainingLoop::create(*service_, *monitor_, devices_, clock_, o);
  ASSERT_FALSE(loop.has_value());
  EXPECT_EQ(loop.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace zeus
