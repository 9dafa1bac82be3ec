// JobView: what the service shows of a job (GET /jobs/{job_id}, the dashboard): its spec, the
// optimizer's phase, each batch size's belief (mean cost ± spread) and the trial timeline; and
// the store-wide summaries of GET /jobs and /metrics.
//
// Beliefs are recomputed from the stored history with the optimizer's own cores (pruning
// explorer, Gaussian Thompson sampling's arm_belief with the job's window and prior), so they
// equal what the next bandit draw will sample from. Units: cost in J (η·energy + (1 − η)·
// max_power·time), time in s, energy in J. Thread-safety: pure functions, except the Store
// readers (one transaction each). Failure: kInternal for a history the pruning explorer cannot
// follow; the store's errors.
//
//   Result<JobView> v = make_job_view(snapshot.spec, snapshot.trials);
//   std::string body = job_view_to_json(*v);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "server/metrics.h"
#include "zeus/common/result.h"
#include "zeus/optimizer/bso_store.h"
#include "zeus/optimizer/bso_types.h"

namespace zeus::server {

// The belief about one batch size's cost.
struct ArmView {
  int batch_size = 0;
  bool is_arm = false;            // one of the bandit's arms (after pruning)
  int num_observations = 0;       // ended trials counted (within the window)
  std::optional<double> mean_cost;    // J; null: nothing known (no cost, flat prior)
  std::optional<double> stddev_cost;  // J; the belief's spread 1/sqrt(precision); 0 = exact
};

struct JobView {
  JobSpec spec;
  bool pruning = true;      // false: the bandit phase
  int pruning_round = 0;    // the round in progress while pruning
  std::vector<ArmView> arms;  // one per batch size, ascending
  std::optional<double> min_converged_cost;  // J: the early-stop rule's min_cost
  std::vector<Trial> trials;                 // ascending trial_number
};

Result<JobView> make_job_view(const JobSpec& spec, std::vector<Trial> trials);

// {"job": <spec>, "phase": "pruning"|"bandit", "pruning_round", "min_cost", "arms": [{
// "batch_size","is_arm","num_observations","mean_cost","stddev_cost"}], "trials": [{"job_id",
// "trial_number","batch_size","kind","pruning_round","status","time","energy","cost","epochs",
// "metric","dispatched_at"}]} (dispatched_at: Unix seconds, null when unknown).
std::string job_view_to_json(const JobView& view);

// GET /jobs: [{"job_id","job_id_prefix","gpu_model","batch_sizes","default_batch_size",
// "num_trials","dispatched","converged","not_converged","failed","min_cost"}], ascending job_id,
// read in one transaction; with totals (optional) also summed for /metrics.
Result<std::string> job_list_json(Store& store, StoreTotals* totals = nullptr);

// The store-wide sums of /metrics, in one transaction.
Result<StoreTotals> store_totals(Store& store);

}  // namespace zeus::server
