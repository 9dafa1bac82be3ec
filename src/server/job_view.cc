// make_job_view, job_view_to_json, job_list_json, store_totals (server/job_view.h).
#include "server/job_view.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <nlohmann/json.hpp>

#include "optimizer/batch_size/gaussian_ts.h"
#include "optimizer/batch_size/next_trial.h"
#include "optimizer/batch_size/pruning_explorer.h"
#include "server/json_text.h"
#include "zeus/wire/bso_json.h"

namespace zeus::server {
namespace {

using nlohmann::json;

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// The wire's trial (zeus/wire/bso_json.h) plus when it was dispatched, which only the job view
// shows.
json trial_json(const Trial& t) {
  json j = json::parse(trial_to_json(t));
  j["dispatched_at"] = t.dispatched_unix_s > 0 ? json(t.dispatched_unix_s) : json();
  return j;
}

using JobHistory = std::pair<JobSpec, std::vector<Trial>>;

// Every job and its trials, ascending job_id, read in one transaction.
Result<std::vector<JobHistory>> read_all_jobs(Store& store) {
  std::vector<JobHistory> out;
  Result<void> r = store.transact([&](StoreTransaction& tx) -> Result<void> {
    out.clear();  // the store may run a transaction again
    Result<std::vector<std::string>> ids = tx.list_jobs();
    if (!ids) return fail(ids.error());
    for (const std::string& id : *ids) {
      Result<std::optional<JobRecord>> job = tx.get_job(id);
      if (!job) return fail(job.error());
      if (!*job) continue;
      Result<std::vector<Trial>> trials = tx.get_trials(id);
      if (!trials) return fail(trials.error());
      out.emplace_back(std::move((*job)->spec), std::move(*trials));
    }
    return ok();
  });
  if (!r) return fail(r.error());
  return out;
}

void add_to_totals(const std::vector<Trial>& trials, StoreTotals* totals) {
  ++totals->jobs;
  for (const Trial& t : trials) {
    ++totals->trials_by_status[static_cast<size_t>(t.status)];
    totals->energy_j += t.energy_j;
    totals->time_s += t.time_s;
  }
}

}  // namespace

Result<JobView> make_job_view(const JobSpec& spec, std::vector<Trial> trials) {
  JobView view;
  view.spec = spec;
  Result<bso::PruningDecision> step = bso::pruning_step(spec, trials);
  if (!step) return fail(step.error());
  view.pruning = step->action != bso::PruningAction::kDone;
  view.pruning_round = view.pruning ? step->round : 0;
  for (int batch_size : spec.batch_sizes) {
    std::vector<double> costs;
    for (const Trial& t : trials) {
      if (t.ended() && t.batch_size == batch_size) costs.push_back(t.cost);
    }
    const std::span<const double> window = bso::newest_costs(costs, spec.window_size);
    const bso::Belief belief = bso::spec_arm_belief(spec, costs);
    ArmView arm;
    arm.batch_size = batch_size;
    arm.is_arm = !view.pruning &&
                 std::find(step->arms.begin(), step->arms.end(), batch_size) != step->arms.end();
    arm.num_observations = static_cast<int>(window.size());
    if (belief.exact()) {
      arm.mean_cost = belief.mean_cost;
      arm.stddev_cost = 0.0;
    } else if (belief.precision > 0) {
      arm.mean_cost = belief.mean_cost;
      arm.stddev_cost = 1.0 / std::sqrt(belief.precision);
    }
    view.arms.push_back(arm);
  }
  view.min_converged_cost = bso::min_converged_cost(trials);
  view.trials = std::move(trials);
  return view;
}

std::string job_view_to_json(const JobView& view) {
  json arms = json::array();
  for (const ArmView& a : view.arms) {
    arms.push_back({{"batch_size", a.batch_size},
                    {"is_arm", a.is_arm},
                    {"num_observations", a.num_observations},
                    {"mean_cost", optional_number(a.mean_cost)},
                    {"stddev_cost", optional_number(a.stddev_cost)}});
  }
  json trials = json::array();
  for (const Trial& t : view.trials) trials.push_back(trial_json(t));
  json j = {{"job", json::parse(job_spec_to_json(view.spec))},
            {"phase", view.pruning ? "pruning" : "bandit"},
            {"pruning_round", view.pruning_round},
            {"min_cost", optional_number(view.min_converged_cost)},
            {"arms", std::move(arms)},
            {"trials", std::move(trials)}};
  return dump_json(j);
}

Result<std::string> job_list_json(Store& store, StoreTotals* totals) {
  Result<std::vector<JobHistory>> jobs = read_all_jobs(store);
  if (!jobs) return fail(jobs.error());
  json list = json::array();
  for (const auto& [spec, trials] : *jobs) {
    std::array<int, 4> by_status{};
    for (const Trial& t : trials) ++by_status[static_cast<size_t>(t.status)];
    list.push_back({{"job_id", spec.job_id.value_or("")},
                    {"job_id_prefix", spec.job_id_prefix},
                    {"gpu_model", spec.gpu_model},
                    {"batch_sizes", spec.batch_sizes},
                    {"default_batch_size", spec.default_batch_size},
                    {"num_trials", trials.size()},
                    {"dispatched", by_status[static_cast<size_t>(TrialStatus::kDispatched)]},
                    {"converged", by_status[static_cast<size_t>(TrialStatus::kConverged)]},
                    {"not_converged", by_status[static_cast<size_t>(TrialStatus::kNotConverged)]},
                    {"failed", by_status[static_cast<size_t>(TrialStatus::kFailed)]},
                    {"min_cost", optional_number(bso::min_converged_cost(trials))}});
    if (totals) add_to_totals(trials, totals);
  }
  return dump_json(list);
}

Result<StoreTotals> store_totals(Store& store) {
  Result<std::vector<JobHistory>> jobs = read_all_jobs(store);
  if (!jobs) return fail(jobs.error());
  StoreTotals totals;
  for (const auto& [spec, trials] : *jobs) add_to_totals(trials, &totals);
  return totals;
}

}  // namespace zeus::server
