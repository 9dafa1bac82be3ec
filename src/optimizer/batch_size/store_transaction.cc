// The Store interfaces' default methods (zeus/optimizer/bso_store.h): StoreTransaction's
// get_job_with_trials (two reads) and Store's ping (an empty transaction).
#include "zeus/optimizer/bso_store.h"

namespace zeus {

Result<std::optional<std::pair<JobRecord, std::vector<Trial>>>>
StoreTransaction::get_job_with_trials(std::string_view job_id) {
  using Loaded = std::optional<std::pair<JobRecord, std::vector<Trial>>>;
  Result<std::optional<JobRecord>> job = get_job(job_id);
  if (!job) return fail(job.error());
  if (!*job) return Loaded();
  Result<std::vector<Trial>> trials = get_trials(job_id);
  if (!trials) return fail(trials.error());
  return Loaded(std::in_place, std::move(**job), std::move(*trials));
}

Result<void> Store::ping() {
  return transact([](StoreTransaction&) -> Result<void> { return ok(); });
}

}  // namespace zeus
