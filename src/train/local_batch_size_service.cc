// The in-process BatchSizeService: a thin adapter over BatchSizeOptimizer.
#include "zeus/optimizer/batch_size_service.h"

namespace zeus {
namespace {

class LocalBatchSizeService final : public BatchSizeService {
 public:
  explicit LocalBatchSizeService(BatchSizeOptimizer& optimizer) : optimizer_(optimizer) {}

  Result<JobSpec> register_job(const JobSpec& spec) override {
    auto registration = optimizer_.register_job(spec);
    if (!registration) return fail(registration.error());
    return registration->job;
  }

  Result<TrialId> next_batch_size(std::string_view job_id) override {
    return optimizer_.next_batch_size(job_id);
  }

  Result<ReportDecision> report(const TrialReport& report) override {
    return optimizer_.report(report);
  }

  Result<void> end_trial(const TrialId& trial) override {
    auto ended = optimizer_.end_trial(trial);
    if (!ended) return fail(ended.error());
    return ok();
  }

 private:
  BatchSizeOptimizer& optimizer_;
};

}  // namespace

std::unique_ptr<BatchSizeService> make_local_batch_size_service(BatchSizeOptimizer& optimizer) {
  return std::make_unique<LocalBatchSizeService>(optimizer);
}

}  // namespace zeus
