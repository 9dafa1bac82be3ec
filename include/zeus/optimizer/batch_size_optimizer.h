// BatchSizeOptimizer: chooses the batch size of each recurrence of a training job (paper §4.3–
// §4.4) over a Store, with the semantics of the service's wire protocol (docs/server.md).
//
// register_job stores a validated spec; next_batch_size dispatches a trial (pruning exploration
// first, then Gaussian Thompson sampling over the surviving batch sizes); report applies the
// early-stop rule to a trial's cumulative time and energy and ends it when training should stop;
// end_trial marks a still-dispatched trial failed. Every operation is one Store transaction, so
// several threads or processes may share one store. Units: time_s, energy_j, cost in J.
// Thread-safety: all methods may be called concurrently. Failure: kInvalidArgument for bad input
// (and, with a message starting "job conflict:", for a job id registered with another spec —
// see is_job_conflict), kNotFound for an unknown job or trial, the store's errors otherwise; on
// any error the stored state is unchanged.
//
//   zeus::BatchSizeOptimizer bso(*store);
//   zeus::TrialId t = bso.register_job(spec).and_then([&](auto r) {
//       return bso.next_batch_size(*r.job.job_id); }).value();   // then report(...) per epoch
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/common/clock.h"
#include "zeus/common/result.h"
#include "zeus/optimizer/bso_store.h"
#include "zeus/optimizer/bso_types.h"

namespace zeus {

struct Registration {
  JobSpec job;           // as stored: validated, batch sizes sorted, job_id set
  bool created = false;  // false: an identical job was already registered
};

// A job and its trials (ascending trial_number).
struct JobSnapshot {
  JobSpec spec;
  std::vector<Trial> trials;
};

class BatchSizeOptimizer {
 public:
  // store must outlive the optimizer. entropy seeds jobs without mab_seed and generates job ids;
  // default: std::random_device. clock stamps each dispatched trial (Trial::dispatched_unix_s,
  // from clock->unix_time_s()) and must outlive the optimizer; default: the system clock.
  explicit BatchSizeOptimizer(Store& store, std::function<uint64_t()> entropy = {},
                              const Clock* clock = nullptr);

  // Validates and stores the job (generating job_id = prefix + 16 hex digits when it is null).
  // An existing job with the same id and spec is returned with created = false; with a
  // different spec it is a "job conflict:" kInvalidArgument naming the first differing field.
  Result<Registration> register_job(const JobSpec& spec);

  // Dispatches a new trial of the job and returns its batch size and trial number.
  Result<TrialId> next_batch_size(std::string_view job_id);

  // Records the trial's cumulative measurements and says whether to stop. A report for a trial
  // that already ended (or was marked failed) changes nothing and answers stop_train = true with
  // the stored outcome.
  Result<ReportDecision> report(const TrialReport& report);

  // Marks a still-dispatched trial failed (training died); a trial that already ended is left
  // as it is. Returns the trial as stored.
  Result<Trial> end_trial(const TrialId& trial);

  // Marks failed every still-dispatched trial (of every job) dispatched at least max_age_s
  // (> 0) before now: abandoned by a client that died without PATCH /trials. Trials with an
  // unknown dispatch time (0) are left alone. Returns the trials it marked, as stored.
  Result<std::vector<Trial>> expire_trials(double max_age_s);

  // Deletes the job and its trials; kNotFound when there is no such job.
  Result<void> delete_job(std::string_view job_id);

  // The job's spec and trials.
  Result<JobSnapshot> get_job(std::string_view job_id);

  // Moves the job to another GPU model (paper §7): every ended trial's time, energy and cost
  // become Epochs(b) × the new GPU's epoch time, energy and EpochCost(b; η), and the spec takes
  // the profile's gpu_model, max_power_w and number_of_gpus. The profile must cover every batch
  // size with an ended trial; the job must have no dispatched trial.
  Result<JobSnapshot> move_job_to_gpu(std::string_view job_id, const GpuEpochProfile& profile);

 private:
  Store& store_;
  std::function<uint64_t()> entropy_;
  const Clock* clock_;
};

// True for the error register_job returns when the job id exists with another spec (HTTP 409).
bool is_job_conflict(const Error& error);

}  // namespace zeus
