// make_memory_store(): the Store in process memory. Rollback through an undo log, so a failed
// transaction costs only what it wrote.
#include <algorithm>
#include <exception>
#include <map>
#include <mutex>

#include "zeus/optimizer/bso_store.h"

namespace zeus {
namespace {

struct JobData {
  JobRecord record;
  std::vector<Trial> trials;  // ascending trial_number
};

using Jobs = std::map<std::string, JobData, std::less<>>;

class MemoryTransaction final : public StoreTransaction {
 public:
  explicit MemoryTransaction(Jobs* jobs) : jobs_(jobs) {}

  Result<std::optional<JobRecord>> get_job(std::string_view job_id) override {
    auto it = jobs_->find(job_id);
    if (it == jobs_->end()) return std::optional<JobRecord>();
    return std::optional<JobRecord>(it->second.record);
  }

  Result<std::vector<std::string>> list_jobs() override {
    std::vector<std::string> ids;
    for (const auto& [id, data] : *jobs_) ids.push_back(id);
    return ids;
  }

  Result<void> put_job(const JobRecord& job) override {
    if (!job.spec.job_id) return fail(ErrorCode::kInvalidArgument, "put_job needs a job_id");
    const std::string& id = *job.spec.job_id;
    auto it = jobs_->find(id);
    if (it == jobs_->end()) {
      jobs_->emplace(id, JobData{job, {}});
      undo_.push_back([this, id] { jobs_->erase(id); });
    } else {
      undo_.push_back([this, id, old = it->second.record] { (*jobs_)[id].record = old; });
      it->second.record = job;
    }
    return ok();
  }

  Result<bool> delete_job(std::string_view job_id) override {
    auto it = jobs_->find(job_id);
    if (it == jobs_->end()) return false;
    undo_.push_back([this, id = it->first, old = std::move(it->second)]() mutable {
      jobs_->emplace(id, std::move(old));
    });
    jobs_->erase(it);
    return true;
  }

  Result<std::vector<Trial>> get_trials(std::string_view job_id) override {
    auto it = jobs_->find(job_id);
    if (it == jobs_->end()) return std::vector<Trial>();
    return it->second.trials;
  }

  Result<void> put_trial(const Trial& trial) override {
    auto it = jobs_->find(trial.job_id);
    if (it == jobs_->end()) {
      return fail(ErrorCode::kNotFound, "no job '" + trial.job_id + "' to add a trial to");
    }
    std::vector<Trial>& trials = it->second.trials;
    auto pos = std::lower_bound(trials.begin(), trials.end(), trial.trial_number,
                                [](const Trial& t, int number) { return t.trial_number < number; });
    const std::string id = trial.job_id;
    const int number = trial.trial_number;
    if (pos != trials.end() && pos->trial_number == number) {
      undo_.push_back([this, id, old = *pos] { *find_trial(id, old.trial_number) = old; });
      *pos = trial;
    } else {
      trials.insert(pos, trial);
      undo_.push_back([this, id, number] {
        std::vector<Trial>& ts = (*jobs_)[id].trials;
        ts.erase(find_trial(id, number));
      });
    }
    return ok();
  }

  void rollback() {
    for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) (*it)();
    undo_.clear();
  }

 private:
  std::vector<Trial>::iterator find_trial(const std::string& id, int number) {
    std::vector<Trial>& ts = (*jobs_)[id].trials;
    return std::find_if(ts.begin(), ts.end(),
                        [number](const Trial& t) { return t.trial_number == number; });
  }

  Jobs* jobs_;
  std::vector<std::function<void()>> undo_;
};

class MemoryStore final : public Store {
 public:
  Result<void> transact(const std::function<Result<void>(StoreTransaction&)>& fn) override {
    std::lock_guard<std::mutex> lock(mu_);
    MemoryTransaction tx(&jobs_);
    Result<void> result;
    try {
      result = fn(tx);
    } catch (const std::exception& e) {  // an error like any other: its writes are undone
      result =
          fail(ErrorCode::kInternal, std::string("memory store: transaction threw: ") + e.what());
    }
    if (!result) tx.rollback();
    return result;
  }

 private:
  std::mutex mu_;
  Jobs jobs_;
};

}  // namespace

std::unique_ptr<Store> make_memory_store() { return std::make_unique<MemoryStore>(); }

}  // namespace zeus
