// JobCache: a database store's copy of the jobs and trials it has read or written, so a
// transaction need not read a job's whole history from the database again (store-internal).
//
// Write-through: the owning store applies each write to the database and then to the cache;
// the cache is only as good as the owner's invalidation, so the owner must clear() it whenever
// the database may have changed behind it (another connection committed, or a transaction
// rolled back). Entries hold what the database holds, never more.
// Thread-safety: none; the owning store uses it under its transaction lock.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/optimizer/bso_store.h"

namespace zeus::store {

class JobCache {
 public:
  // At most this many jobs are kept (a job with a few hundred trials takes some 30 kB); past
  // it the cache starts over.
  explicit JobCache(size_t max_jobs = 1024) : max_jobs_(max_jobs) {}

  void clear() { jobs_.clear(); }

  // The cached job, or nullptr when it is not cached (which says nothing about the database).
  const JobRecord* job(std::string_view job_id) const;
  // The cached trials of a cached job, or nullptr when they are not cached.
  const std::vector<Trial>* trials(std::string_view job_id) const;

  // Records that the database holds job (read or just written); its trials stay cached only
  // when the job was cached before.
  void put_job(const JobRecord& job);
  // Records all trials of a cached job (ascending trial_number); ignored for an uncached job.
  void put_trials(std::string_view job_id, std::vector<Trial> trials);
  // Records one trial written to the database; ignored unless the job's trials are cached.
  void put_trial(const Trial& trial);
  void erase_job(std::string_view job_id);

 private:
  struct Entry {
    JobRecord record;
    std::optional<std::vector<Trial>> trials;
  };
  size_t max_jobs_;
  std::map<std::string, Entry, std::less<>> jobs_;
};

}  // namespace zeus::store
