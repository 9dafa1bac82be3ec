#include "zeus/optimizer/batch_size_optimizer.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>

#include "optimizer/batch_size/cost.h"
#include "optimizer/batch_size/early_stop.h"
#include "optimizer/batch_size/gpu_translation.h"
#include "optimizer/batch_size/next_epoch_cost.h"
#include "optimizer/batch_size/next_trial.h"
#include "optimizer/batch_size/rng.h"

namespace zeus {
namespace {

constexpr std::string_view kConflictPrefix = "job conflict: ";

std::string fmt(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

tl::unexpected<Error> unknown_job(std::string_view job_id) {
  return fail(ErrorCode::kNotFound,
              "unknown job '" + std::string(job_id) + "'; register it first (POST /jobs)");
}

// A job with its trials, read in one transaction.
struct LoadedJob {
  JobRecord record;
  std::vector<Trial> trials;
};

// The job and its trials; kNotFound for an unknown job.
Result<LoadedJob> load_job(StoreTransaction& tx, std::string_view job_id) {
  auto loaded = tx.get_job_with_trials(job_id);
  if (!loaded) return fail(loaded.error());
  if (!*loaded) return unknown_job(job_id);
  return LoadedJob{std::move((*loaded)->first), std::move((*loaded)->second)};
}

// Finds the trial `number` of a job; kNotFound names it.
Result<Trial*> find_trial(std::vector<Trial>& trials, std::string_view job_id, int number) {
  for (Trial& t : trials) {
    if (t.trial_number == number) return &t;
  }
  return fail(ErrorCode::kNotFound, "job '" + std::string(job_id) + "' has no trial " +
                                        std::to_string(number) +
                                        "; ask for a batch size first (GET /jobs/batch_size)");
}

Result<void> check_batch_size(const Trial& t, int batch_size) {
  if (t.batch_size == batch_size) return ok();
  return fail(ErrorCode::kInvalidArgument,
              "trial " + std::to_string(t.trial_number) + " of job '" + t.job_id +
                  "' runs batch size " + std::to_string(t.batch_size) + ", not " +
                  std::to_string(batch_size));
}

Result<void> check_report(const TrialReport& r) {
  auto bad = [&](const std::string& what) {
    return fail(ErrorCode::kInvalidArgument, "report for trial " +
                                                 std::to_string(r.trial_number) + " of job '" +
                                                 r.job_id + "': " + what);
  };
  if (!(r.time_s >= 0 && std::isfinite(r.time_s))) return bad("time must be a finite value >= 0 s");
  if (!(r.energy_j >= 0 && std::isfinite(r.energy_j))) {
    return bad("energy must be a finite value >= 0 J");
  }
  if (!std::isfinite(r.metric)) return bad("metric must be finite");
  if (r.current_epoch < 0) return bad("current_epoch must be >= 0");
  return ok();
}

ReportDecision stored_outcome(const Trial& t) {
  ReportDecision d;
  d.stop_train = true;
  d.converged = t.status == TrialStatus::kConverged;
  d.message = "trial " + std::to_string(t.trial_number) + " already " +
              (t.status == TrialStatus::kFailed ? "was marked failed"
                                                : "ended (" +
                                                      std::string(trial_status_name(t.status)) +
                                                      ")") +
              "; the stored outcome stands and this report was not recorded";
  return d;
}

std::string stop_message(const JobSpec& spec, const bso::StopDecisionCore& d, int epoch) {
  if (!d.stop_train) return "stop condition not met: keep training";
  if (d.converged) {
    return "train succeeded: reached target metric " + fmt(spec.target_metric) + " at cost " +
           fmt(d.cost) + " J";
  }
  if (d.next_epoch_over_bound) {
    return "cost " + fmt(d.cost) + " J plus the next epoch's expected cost would exceed beta_knob × "
           "min_cost = " + fmt(d.cost_bound) + " J: stopped early (early_stop 'predictive')";
  }
  if (!d.within_bound) {
    return "cost " + fmt(d.cost) + " J exceeded beta_knob × min_cost = " + fmt(d.cost_bound) +
           " J: stopped early" + (d.reached_target ? " (the target was reached over the bound)" : "");
  }
  return "train failed to converge within max_epochs (" + std::to_string(spec.max_epochs) +
         "; epoch " + std::to_string(epoch) + ")";
}

}  // namespace

bool is_job_conflict(const Error& error) {
  return error.code == ErrorCode::kInvalidArgument &&
         std::string_view(error.message).substr(0, kConflictPrefix.size()) == kConflictPrefix;
}

BatchSizeOptimizer::BatchSizeOptimizer(Store& store, std::function<uint64_t()> entropy,
                                       const Clock* clock)
    : store_(store), entropy_(std::move(entropy)), clock_(clock) {
  if (clock_ == nullptr) {
    static const SystemClock system_clock;
    clock_ = &system_clock;
  }
  if (!entropy_) {
    entropy_ = [] {
      std::random_device device;
      return (static_cast<uint64_t>(device()) << 32) ^ device();
    };
  }
}

Result<Registration> BatchSizeOptimizer::register_job(const JobSpec& input) {
  Result<JobSpec> valid = validate_job_spec(input);
  if (!valid) return fail(valid.error());
  JobSpec spec = std::move(*valid);
  if (!spec.job_id) {
    char suffix[17];
    std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(entropy_()));
    spec.job_id = spec.job_id_prefix + suffix;
  }
  const uint64_t seed = spec.mab_seed ? static_cast<uint64_t>(*spec.mab_seed) : entropy_();
  Registration out;
  Result<void> r = store_.transact([&](StoreTransaction& tx) -> Result<void> {
    Result<std::optional<JobRecord>> existing = tx.get_job(*spec.job_id);
    if (!existing) return fail(existing.error());
    if (*existing) {
      const std::string diff = job_spec_difference((*existing)->spec, spec);
      if (!diff.empty()) {
        return fail(ErrorCode::kInvalidArgument,
                    std::string(kConflictPrefix) + "job '" + *spec.job_id +
                        "' is registered with a different configuration (" + diff +
                        "); use a new job_id for a different configuration");
      }
      out = {(*existing)->spec, false};
      return ok();
    }
    out = {spec, true};
    return tx.put_job({spec, bso::Rng(seed).save()});
  });
  if (!r) return fail(r.error());
  return out;
}

Result<TrialId> BatchSizeOptimizer::next_batch_size(std::string_view job_id) {
  TrialId out;
  Result<void> r = store_.transact([&](StoreTransaction& tx) -> Result<void> {
    Result<LoadedJob> job = load_job(tx, job_id);
    if (!job) return fail(job.error());
    JobRecord& record = job->record;
    const std::vector<Trial>& trials = job->trials;
    Result<bso::Rng> rng = bso::Rng::restore(record.rng_state);
    if (!rng) return fail(ErrorCode::kInternal, "job '" + std::string(job_id) +
                                                    "' has a corrupt random state: " +
                                                    rng.error().message);
    Result<bso::NextTrialDecision> next = bso::decide_next_trial(record.spec, trials, *rng);
    if (!next) return fail(next.error());
    Trial trial;
    trial.job_id = std::string(job_id);
    trial.trial_number = trials.empty() ? 1 : trials.back().trial_number + 1;
    trial.batch_size = next->batch_size;
    trial.kind = next->kind;
    trial.pruning_round = next->kind == TrialKind::kPruning ? next->pruning_round : 0;
    trial.status = TrialStatus::kDispatched;
    trial.dispatched_unix_s = clock_->unix_time_s();
    ZEUS_TRY(tx.put_trial(trial));
    const std::string state = rng->save();
    if (state != record.rng_state) {
      record.rng_state = state;
      ZEUS_TRY(tx.put_job(record));
    }
    out = {trial.job_id, trial.batch_size, trial.trial_number};
    return ok();
  });
  if (!r) return fail(r.error());
  return out;
}

Result<ReportDecision> BatchSizeOptimizer::report(const TrialReport& report) {
  ZEUS_TRY(check_report(report));
  ReportDecision out;
  Result<void> r = store_.transact([&](StoreTransaction& tx) -> Result<void> {
    Result<LoadedJob> job = load_job(tx, report.job_id);
    if (!job) return fail(job.error());
    const JobSpec& spec = job->record.spec;
    std::vector<Trial>& trials = job->trials;
    Result<Trial*> found = find_trial(trials, report.job_id, report.trial_number);
    if (!found) return fail(found.error());
    Trial& trial = **found;
    ZEUS_TRY(check_batch_size(trial, report.batch_size));
    if (trial.status != TrialStatus::kDispatched) {
      out = stored_outcome(trial);
      return ok();
    }
    const bso::StopRule rule = bso::stop_rule_of(spec, trial.kind);
    bso::EpochCostEvidence evidence;
    evidence.cost_j = bso::zeus_cost(report.energy_j, report.time_s, rule.eta, rule.max_power_w);
    // Finite time and energy may still give an infinite cost (1.5e308 J and s): refused here,
    // whatever the store, rather than stored as inf (SQLite) or refused as "not finite" (MySQL).
    if (!std::isfinite(evidence.cost_j)) {
      return fail(ErrorCode::kInvalidArgument,
                  "report for trial " + std::to_string(report.trial_number) + " of job '" +
                      report.job_id + "': time " + fmt(report.time_s) + " s and energy " +
                      fmt(report.energy_j) +
                      " J give a cost that is not finite (eta x energy + (1 - eta) x max_power "
                      "x time overflows): report the epoch's real time (s) and energy (J)");
    }
    evidence.epochs = report.current_epoch;
    evidence.previous_cost_j = trial.cost;  // the trial's previous report (0, 0 before one)
    evidence.previous_epochs = trial.epochs;
    evidence.prior_epoch_cost_j = bso::prior_epoch_cost(trials, trial.batch_size);
    const bso::StopDecisionCore d = bso::decide_stop(
        rule, bso::min_converged_cost(trials),
        {report.time_s, report.energy_j, report.metric, report.current_epoch,
         bso::expected_next_epoch_cost(evidence)});
    trial.time_s = report.time_s;
    trial.energy_j = report.energy_j;
    trial.metric = report.metric;
    trial.epochs = report.current_epoch;
    trial.cost = d.cost;
    if (d.stop_train) {
      trial.status = d.converged ? TrialStatus::kConverged : TrialStatus::kNotConverged;
    }
    ZEUS_TRY(tx.put_trial(trial));
    out = {d.stop_train, d.converged, stop_message(spec, d, report.current_epoch)};
    return ok();
  });
  if (!r) return fail(r.error());
  return out;
}

Result<Trial> BatchSizeOptimizer::end_trial(const TrialId& id) {
  Trial out;
  Result<void> r = store_.transact([&](StoreTransaction& tx) -> Result<void> {
    Result<LoadedJob> job = load_job(tx, id.job_id);
    if (!job) return fail(job.error());
    Result<Trial*> found = find_trial(job->trials, id.job_id, id.trial_number);
    if (!found) return fail(found.error());
    Trial& trial = **found;
    ZEUS_TRY(check_batch_size(trial, id.batch_size));
    if (trial.status == TrialStatus::kDispatched) {
      trial.status = TrialStatus::kFailed;
      ZEUS_TRY(tx.put_trial(trial));
    }
    out = trial;
    return ok();
  });
  if (!r) return fail(r.error());
  return out;
}

Result<std::vector<Trial>> BatchSizeOptimizer::expire_trials(double max_age_s) {
  if (!(max_age_s > 0 && std::isfinite(max_age_s))) {
    return fail(ErrorCode::kInvalidArgument, "trial timeout " + fmt(max_age_s) +
                                                 " s must be a finite value > 0");
  }
  const double cutoff_unix_s = clock_->unix_time_s() - max_age_s;
  std::vector<Trial> expired;
  Result<void> r = store_.transact([&](StoreTransaction& tx) -> Result<void> {
    expired.clear();
    Result<std::vector<std::string>> jobs = tx.list_jobs();
    if (!jobs) return fail(jobs.error());
    for (const std::string& job_id : *jobs) {
      Result<std::vector<Trial>> trials = tx.get_trials(job_id);
      if (!trials) return fail(trials.error());
      for (Trial& t : *trials) {
        if (t.status != TrialStatus::kDispatched || t.dispatched_unix_s <= 0 ||
            t.dispatched_unix_s > cutoff_unix_s) {
          continue;
        }
        t.status = TrialStatus::kFailed;
        ZEUS_TRY(tx.put_trial(t));
        expired.push_back(t);
      }
    }
    return ok();
  });
  if (!r) return fail(r.error());
  return expired;
}

Result<void> BatchSizeOptimizer::delete_job(std::string_view job_id) {
  return store_.transact([&](StoreTransaction& tx) -> Result<void> {
    Result<bool> deleted = tx.delete_job(job_id);
    if (!deleted) return fail(deleted.error());
    if (!*deleted) return unknown_job(job_id);
    return ok();
  });
}

Result<JobSnapshot> BatchSizeOptimizer::get_job(std::string_view job_id) {
  JobSnapshot out;
  Result<void> r = store_.transact([&](StoreTransaction& tx) -> Result<void> {
    Result<LoadedJob> job = load_job(tx, job_id);
    if (!job) return fail(job.error());
    out = {std::move(job->record.spec), std::move(job->trials)};
    return ok();
  });
  if (!r) return fail(r.error());
  return out;
}

Result<JobSnapshot> BatchSizeOptimizer::move_job_to_gpu(std::string_view job_id,
                                                        const GpuEpochProfile& profile) {
  ZEUS_TRY(bso::validate_gpu_profile(profile));
  JobSnapshot out;
  Result<void> r = store_.transact([&](StoreTransaction& tx) -> Result<void> {
    Result<LoadedJob> job = load_job(tx, job_id);
    if (!job) return fail(job.error());
    JobRecord& record = job->record;
    std::vector<Trial>& trials = job->trials;
    for (const Trial& t : trials) {
      if (t.status == TrialStatus::kDispatched) {
        return fail(ErrorCode::kInvalidArgument,
                    "job '" + std::string(job_id) + "' still has trial " +
                        std::to_string(t.trial_number) +
                        " dispatched; end or abandon it (PATCH /trials) before moving the job");
      }
    }
    for (Trial& t : trials) {
      if (!t.ended()) continue;
      Result<bso::TranslatedObservation> moved =
          bso::translate_observation(t.batch_size, t.epochs, profile, record.spec.eta_knob);
      if (!moved) return fail(moved.error());
      t.time_s = moved->time_s;
      t.energy_j = moved->energy_j;
      t.cost = moved->cost;
      ZEUS_TRY(tx.put_trial(t));
    }
    record.spec.gpu_model = profile.gpu_model;
    record.spec.max_power_w = profile.max_power_w;
    record.spec.number_of_gpus = profile.number_of_gpus;
    ZEUS_TRY(tx.put_job(record));
    out = {record.spec, std::move(trials)};
    return ok();
  });
  if (!r) return fail(r.error());
  return out;
}

}  // namespace zeus
