// PostgresJobCache: the jobs a PostgreSQL (or MySQL: mysql_transaction.h) store has read or
// written, with their trials and the version they had (store-internal).
//
// Every transaction that writes a job sets the job's `version` column to a new random value, so
// a copy is current exactly when its version equals the row's. A transaction reads the version
// under the job's lock and gets the rows only when they differ (one round trip either way), so a
// request no longer re-reads a history that another replica did not change. A copy is stored only
// after its transaction committed; a stale one is never used, only replaced.
// Thread-safety: all members may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/optimizer/bso_store.h"

namespace zeus::store {

struct CachedJob {
  int64_t version = 0;
  JobRecord record;
  std::vector<Trial> trials;
};

class PostgresJobCache {
 public:
  explicit PostgresJobCache(size_t max_jobs = 4096) : max_jobs_(max_jobs) {}

  // A copy of the job's entry, if any.
  std::optional<CachedJob> get(std::string_view job_id) const;
  // Stores (or replaces) the job's entry; when full, drops another job's first.
  void put(const std::string& job_id, CachedJob job);
  void erase(std::string_view job_id);

 private:
  const size_t max_jobs_;
  mutable std::mutex mu_;
  std::map<std::string, CachedJob, std::less<>> jobs_;
};

// A new version for a written job: random, positive (never the -1 of "no copy").
int64_t new_job_version();

}  // namespace zeus::store
