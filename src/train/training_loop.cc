#include "zeus/train/training_loop.h"

#include <cmath>
#include <string>

#include "zeus/common/log.h"

namespace zeus {
namespace {

constexpr const char* kEpochWindow = "zeus_training_loop_epoch";

}  // namespace

TrainingLoop::TrainingLoop(BatchSizeService& service, EnergyMonitor& monitor, JobSpec job,
                           TrialId trial)
    : service_(service), monitor_(monitor), job_(std::move(job)), trial_(std::move(trial)) {}

Result<std::unique_ptr<TrainingLoop>> TrainingLoop::create(BatchSizeService& service,
                                                           EnergyMonitor& monitor,
                                                           Devices& devices, Clock& clock,
                                                           TrainingLoopOptions options) {
  if (monitor.gpu_indices().empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "the training loop measures GPU energy, but the monitor has no GPU");
  }
  auto job = service.register_job(options.job);
  if (!job) return fail(job.error());
  if (!job->job_id) return fail(ErrorCode::kInternal, "the optimizer returned a job without id");
  auto trial = service.next_batch_size(*job->job_id);
  if (!trial) return fail(trial.error());
  std::unique_ptr<TrainingLoop> loop(new TrainingLoop(service, monitor, *job, *trial));
  if (options.optimize_power_limit) {
    auto optimizer = PowerLimitOptimizer::create(monitor, devices, clock, options.power_limit);
    if (!optimizer) return fail(optimizer.error());  // ~TrainingLoop marks the trial failed
    loop->power_limit_ = std::move(*optimizer);
  }
  log_info("training loop: job " + *job->job_id + " trial " + std::to_string(trial->trial_number) +
           " trains with batch size " + std::to_string(trial->batch_size));
  return loop;
}

TrainingLoop::~TrainingLoop() {
  if (epoch_open_) (void)monitor_.end_window(kEpochWindow, /*sync=*/false, /*cancel=*/true);
  if (!trial_ended_) {
    auto ended = service_.end_trial(trial_);
    if (!ended) log_warning("could not mark trial failed: " + ended.error().message);
  }
}

Result<void> TrainingLoop::begin_epoch() {
  if (epoch_open_) {
    return fail(ErrorCode::kInvalidArgument,
                "epoch " + std::to_string(epochs_done_) +
                    " was not reported: call report_metric() after each epoch's evaluation");
  }
  ZEUS_TRY(monitor_.begin_window(kEpochWindow));
  epoch_open_ = true;
  if (power_limit_) ZEUS_TRY(power_limit_->on_epoch_begin());
  return ok();
}

bool TrainingLoop::next_epoch() {
  if (stopped_ || error_) return false;
  if (epochs_done_ >= job_.max_epochs) return false;
  auto begun = begin_epoch();
  if (!begun) {
    error_ = begun.error();
    return false;
  }
  return true;
}

Result<void> TrainingLoop::on_step_begin() {
  if (power_limit_) return power_limit_->on_step_begin();
  return ok();
}

Result<void> TrainingLoop::on_step_end() {
  if (power_limit_) return power_limit_->on_step_end();
  return ok();
}

Result<ReportDecision> TrainingLoop::report_metric(double metric) {
  if (!epoch_open_) {
    return fail(ErrorCode::kInvalidArgument,
                "report_metric() outside an epoch: call it once per epoch of epochs()");
  }
  // Checked before the epoch ends, so that a bad metric changes nothing.
  if (!std::isfinite(metric)) {
    return fail(ErrorCode::kInvalidArgument,
                "the metric must be a finite number, got " + std::to_string(metric) +
                    " (the epoch stays open: report it again with a finite metric)");
  }
  auto measured = monitor_.end_window(kEpochWindow);
  epoch_open_ = false;
  if (!measured) return fail(measured.error());
  time_s_ += measured->time_s;
  for (const auto& [index, joules] : measured->gpu_energy_j) energy_j_ += joules;
  // Whatever fails from here leaves the epoch unreported and measuring: its window opens again,
  // so the next report_metric() reports this epoch, with the time and energy measured until then
  // (the totals keep what was measured so far).
  auto reopen_epoch = [this] {
    if (monitor_.begin_window(kEpochWindow)) epoch_open_ = true;
  };
  if (power_limit_) {
    if (auto ended = power_limit_->on_epoch_end(); !ended) {
      reopen_epoch();
      return fail(ended.error());
    }
  }
  TrialReport report{.job_id = trial_.job_id,
                     .batch_size = trial_.batch_size,
                     .trial_number = trial_.trial_number,
                     .time_s = time_s_,
                     .energy_j = energy_j_,
                     .metric = metric,
                     .current_epoch = epochs_done_ + 1};
  auto decision = service_.report(report);
  if (!decision) {
    reopen_epoch();
    return fail(decision.error());
  }
  ++epochs_done_;
  last_decision_ = *decision;
  if (decision->stop_train) {
    stopped_ = true;
    trial_ended_ = true;
    log_info("training loop: stop after epoch " + std::to_string(epochs_done_) + ": " +
             decision->message);
  }
  return *decision;
}

TrainingLoop::EpochRange TrainingLoop::epochs() { return EpochRange(this); }

}  // namespace zeus
