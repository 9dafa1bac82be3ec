// BatchSizeService: what a training job needs from the batch-size optimizer, whether it runs in
// this process (a BatchSizeOptimizer over a Store) or as a service reached over HTTP.
//
// Units: time_s, energy_j (cumulative for the trial). Thread-safety: as the implementation
// (the local one may be shared by threads). Failure: the optimizer's or the transport's errors.
//
//   auto service = zeus::make_local_batch_size_service(optimizer);
//   auto job = service->register_job(spec);
//   auto trial = service->next_batch_size(*job->job_id);
#pragma once

#include <memory>
#include <string_view>

#include "zeus/common/result.h"
#include "zeus/optimizer/batch_size_optimizer.h"
#include "zeus/optimizer/bso_types.h"

namespace zeus {

class BatchSizeService {
 public:
  virtual ~BatchSizeService() = default;
  // Registers the job (idempotent for an identical spec) and returns it with its job_id.
  virtual Result<JobSpec> register_job(const JobSpec& spec) = 0;
  // Dispatches a trial: the batch size to train with and its trial number.
  virtual Result<TrialId> next_batch_size(std::string_view job_id) = 0;
  // Reports cumulative time/energy and the latest metric; says whether to stop.
  virtual Result<ReportDecision> report(const TrialReport& report) = 0;
  // Marks a trial that did not end normally as failed.
  virtual Result<void> end_trial(const TrialId& trial) = 0;
};

// The service over an in-process optimizer; `optimizer` must outlive it.
std::unique_ptr<BatchSizeService> make_local_batch_size_service(BatchSizeOptimizer& optimizer);

}  // namespace zeus
