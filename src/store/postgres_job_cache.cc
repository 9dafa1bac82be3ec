// PostgresJobCache (store/postgres_job_cache.h).
#include "store/postgres_job_cache.h"

#include <random>

namespace zeus::store {

std::optional<CachedJob> PostgresJobCache::get(std::string_view job_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return std::nullopt;
  return it->second;
}

void PostgresJobCache::put(const std::string& job_id, CachedJob job) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() && jobs_.size() >= max_jobs_ && !jobs_.empty()) {
    jobs_.erase(jobs_.begin());
  }
  jobs_[job_id] = std::move(job);
}

void PostgresJobCache::erase(std::string_view job_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = jobs_.find(job_id); it != jobs_.end()) jobs_.erase(it);
}

int64_t new_job_version() {
  thread_local std::mt19937_64 random(std::random_device{}());
  return static_cast<int64_t>(random() >> 2) + 1;  // in [1, 2^62]
}

}  // namespace zeus::store
