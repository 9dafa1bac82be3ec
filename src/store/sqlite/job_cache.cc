// JobCache (store/job_cache.h).
#include "store/sqlite/job_cache.h"

#include <algorithm>

namespace zeus::store {

const JobRecord* JobCache::job(std::string_view job_id) const {
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : &it->second.record;
}

const std::vector<Trial>* JobCache::trials(std::string_view job_id) const {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || !it->second.trials) return nullptr;
  return &*it->second.trials;
}

void JobCache::put_job(const JobRecord& job) {
  if (!job.spec.job_id) return;
  auto it = jobs_.find(*job.spec.job_id);
  if (it != jobs_.end()) {
    it->second.record = job;
    return;
  }
  if (jobs_.size() >= max_jobs_) jobs_.clear();
  jobs_.emplace(*job.spec.job_id, Entry{job, std::nullopt});
}

void JobCache::put_trials(std::string_view job_id, std::vector<Trial> trials) {
  auto it = jobs_.find(job_id);
  if (it != jobs_.end()) it->second.trials = std::move(trials);
}

void JobCache::put_trial(const Trial& trial) {
  auto it = jobs_.find(trial.job_id);
  if (it == jobs_.end() || !it->second.trials) return;
  std::vector<Trial>& trials = *it->second.trials;
  auto pos = std::lower_bound(trials.begin(), trials.end(), trial.trial_number,
                              [](const Trial& t, int number) { return t.trial_number < number; });
  if (pos != trials.end() && pos->trial_number == trial.trial_number) {
    *pos = trial;
  } else {
    trials.insert(pos, trial);
  }
}

void JobCache::erase_job(std::string_view job_id) {
  auto it = jobs_.find(job_id);
  if (it != jobs_.end()) jobs_.erase(it);
}

}  // namespace zeus::store
