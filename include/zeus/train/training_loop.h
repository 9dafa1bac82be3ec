// TrainingLoop: one recurrence of a recurring training job, optimised by Zeus — the C++
// equivalent of the paper's ZeusDataLoader (Listing 1).
//
// At creation it registers the job with the batch-size optimizer (local or the service) and gets
// this recurrence's batch size. Each epoch is one monitor window; after each evaluation the user
// calls report_metric(), which reports the trial's cumulative time and GPU energy and learns
// whether to stop (target reached, early stop at β × min cost, or max_epochs). In the first
// epoch the power-limit optimizer profiles the GPUs (the user forwards step begin/end). A trial
// that is not ended when the loop is destroyed (training died or the user broke out) is marked
// failed, the way the Python client's exit hook does.
// Units: time_s, energy_j (SI). Thread-safety: one thread. Failure: Result; a failure inside
// epochs() ends the range and is kept in error().
//
//   auto loop = zeus::TrainingLoop::create(service, *monitor, devices, clock, {.job = spec});
//   for (int epoch : (*loop)->epochs()) {
//     for (auto& batch : data((*loop)->batch_size())) { (*loop)->on_step_begin(); step(batch);
//                                                        (*loop)->on_step_end(); }
//     (*loop)->report_metric(evaluate());
//   }
#pragma once

#include <memory>
#include <optional>

#include "zeus/common/clock.h"
#include "zeus/common/result.h"
#include "zeus/device/device.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/optimizer/batch_size_service.h"
#include "zeus/optimizer/power_limit_optimizer.h"

namespace zeus {

struct TrainingLoopOptions {
  // The recurring job (registered idempotently; job_id null = let the optimizer name it, which
  // makes every run a new job — set it, or its prefix-derived id, for real recurrences).
  JobSpec job;
  // Run the JIT power-limit optimizer in the first epoch.
  bool optimize_power_limit = true;
  PowerLimitOptimizerOptions power_limit;
};

class TrainingLoop {
 public:
  static Result<std::unique_ptr<TrainingLoop>> create(BatchSizeService& service,
                                                      EnergyMonitor& monitor, Devices& devices,
                                                      Clock& clock, TrainingLoopOptions options);
  // Cancels an open epoch and marks a trial that has not ended as failed.
  ~TrainingLoop();
  TrainingLoop(const TrainingLoop&) = delete;
  TrainingLoop& operator=(const TrainingLoop&) = delete;

  // This recurrence's batch size and trial.
  int batch_size() const { return trial_.batch_size; }
  const TrialId& trial() const { return trial_; }
  const JobSpec& job() const { return job_; }

  // Starts the next epoch: true to train it, false when training should stop (the optimizer
  // said so, max_epochs reached, or an error — then error() says which).
  bool next_epoch();
  // Forward each training step's begin/end (drives the power-limit optimizer).
  Result<void> on_step_begin();
  Result<void> on_step_end();
  // Ends the epoch after evaluation: reports cumulative time/energy and `metric`. On failure
  // nothing is lost: a non-finite metric is refused before the epoch ends, and a report that
  // fails leaves the epoch open, to be reported by the next call.
  Result<ReportDecision> report_metric(double metric);

  // The epochs to train: `for (int epoch : loop.epochs())`, numbered from 0.
  class EpochRange;
  EpochRange epochs();

  // Epochs finished (reported) so far, and the trial's cumulative time and GPU energy.
  int epochs_done() const { return epochs_done_; }
  double time_s() const { return time_s_; }
  double energy_j() const { return energy_j_; }
  // True once the optimizer answered stop_train.
  bool stopped() const { return stopped_; }
  // The last decision, once an epoch was reported.
  const std::optional<ReportDecision>& last_decision() const { return last_decision_; }
  // The first error met by next_epoch() (the range cannot return it).
  const std::optional<Error>& error() const { return error_; }
  // The power-limit optimizer, when enabled.
  PowerLimitOptimizer* power_limit_optimizer() { return power_limit_.get(); }

 private:
  TrainingLoop(BatchSizeService& service, EnergyMonitor& monitor, JobSpec job, TrialId trial);
  Result<void> begin_epoch();

  BatchSizeService& service_;
  EnergyMonitor& monitor_;
  JobSpec job_;
  TrialId trial_;
  std::unique_ptr<PowerLimitOptimizer> power_limit_;
  bool epoch_open_ = false;
  bool stopped_ = false;
  bool trial_ended_ = false;
  int epochs_done_ = 0;
  double time_s_ = 0.0;
  double energy_j_ = 0.0;
  std::optional<ReportDecision> last_decision_;
  std::optional<Error> error_;
};

class TrainingLoop::EpochRange {
 public:
  class Iterator {
   public:
    Iterator(TrainingLoop* loop, bool running) : loop_(loop), running_(running) {}
    int operator*() const { return loop_->epochs_done(); }
    Iterator& operator++() {
      running_ = loop_->next_epoch();
      return *this;
    }
    bool operator!=(const Iterator& other) const { return running_ != other.running_; }

   private:
    TrainingLoop* loop_;
    bool running_;
  };
  explicit EpochRange(TrainingLoop* loop) : loop_(loop) {}
  Iterator begin() { return Iterator(loop_, loop_->next_epoch()); }
  Iterator end() { return Iterator(loop_, false); }

 private:
  TrainingLoop* loop_;
};

}  // namespace zeus
