// validate_job_spec, job_spec_difference and the trial enum names (zeus/optimizer/bso_types.h).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "zeus/optimizer/bso_types.h"

namespace zeus {
namespace {

Result<JobSpec> invalid(const std::string& message) {
  return fail(ErrorCode::kInvalidArgument, "job spec: " + message);
}

template <typename T>
std::string show(const T& value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

template <typename T>
std::string show(const std::optional<T>& value) {
  return value ? show(*value) : std::string("null");
}

std::string show(EarlyStopMode mode) { return std::string(early_stop_mode_name(mode)); }

std::string show(const std::vector<int>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';  // appended separately: "," + to_string() trips GCC 12's -Wrestrict at -O3
    out += std::to_string(values[i]);
  }
  return out + "]";
}

}  // namespace

Result<JobSpec> validate_job_spec(JobSpec spec) {
  if (spec.batch_sizes.empty()) {
    return invalid("batch_sizes is empty; list at least the default batch size");
  }
  std::sort(spec.batch_sizes.begin(), spec.batch_sizes.end());
  if (spec.batch_sizes.front() <= 0) {
    return invalid("batch_sizes holds " + std::to_string(spec.batch_sizes.front()) +
                   "; every batch size must be positive");
  }
  if (std::adjacent_find(spec.batch_sizes.begin(), spec.batch_sizes.end()) !=
      spec.batch_sizes.end()) {
    return invalid("batch_sizes " + show(spec.batch_sizes) + " lists a size twice; list each once");
  }
  if (!std::binary_search(spec.batch_sizes.begin(), spec.batch_sizes.end(),
                          spec.default_batch_size)) {
    return invalid("default_batch_size " + std::to_string(spec.default_batch_size) +
                   " is not in batch_sizes " + show(spec.batch_sizes) + "; add it to the list");
  }
  if (!(spec.eta_knob >= 0.0 && spec.eta_knob <= 1.0)) {
    return invalid("eta_knob " + show(spec.eta_knob) + " is outside [0, 1]");
  }
  if (spec.beta_knob && !(*spec.beta_knob > 0.0 && std::isfinite(*spec.beta_knob))) {
    return invalid("beta_knob " + show(*spec.beta_knob) +
                   " must be > 0 (or null to turn early stopping off)");
  }
  if (!std::isfinite(spec.target_metric)) return invalid("target_metric must be finite");
  if (spec.max_epochs < 1) {
    return invalid("max_epochs " + std::to_string(spec.max_epochs) + " must be >= 1");
  }
  if (spec.num_pruning_rounds < 0) {
    return invalid("num_pruning_rounds " + std::to_string(spec.num_pruning_rounds) +
                   " must be >= 0");
  }
  if (spec.window_size < 0) {
    return invalid("window_size " + std::to_string(spec.window_size) +
                   " must be >= 0 (0 = all history)");
  }
  if (!std::isfinite(spec.mab_prior_mean)) return invalid("mab_prior_mean must be finite");
  if (!(spec.mab_prior_precision >= 0.0 && std::isfinite(spec.mab_prior_precision))) {
    return invalid("mab_prior_precision " + show(spec.mab_prior_precision) +
                   " must be >= 0 (0 = flat prior)");
  }
  if (spec.mab_num_explorations < 0) {
    return invalid("mab_num_explorations " + std::to_string(spec.mab_num_explorations) +
                   " must be >= 0");
  }
  if (!(spec.max_power_w > 0.0 && std::isfinite(spec.max_power_w))) {
    return invalid("max_power " + show(spec.max_power_w) +
                   " W must be > 0 (the maximum power limit × number of GPUs)");
  }
  if (spec.number_of_gpus < 1) {
    return invalid("number_of_gpus " + std::to_string(spec.number_of_gpus) + " must be >= 1");
  }
  if (spec.early_stop == EarlyStopMode::kKnownEpochCost) {
    return invalid("early_stop 'known-epoch-cost' needs each epoch's cost in advance (simulation "
                   "only); use 'predictive' or 'after-crossing'");
  }
  if (spec.prune_factor && !(*spec.prune_factor >= 1.0 && std::isfinite(*spec.prune_factor))) {
    return invalid("prune_factor " + show(*spec.prune_factor) +
                   " must be >= 1 (or null to re-run every survivor in later pruning rounds)");
  }
  if (spec.pruning_beta_knob &&
      !(*spec.pruning_beta_knob > 0.0 && std::isfinite(*spec.pruning_beta_knob))) {
    return invalid("pruning_beta_knob " + show(*spec.pruning_beta_knob) +
                   " must be > 0 (or null to use beta_knob)");
  }
  if (spec.pruning_stop_after_rises < 0) {
    return invalid("pruning_stop_after_rises " + std::to_string(spec.pruning_stop_after_rises) +
                   " must be >= 0 (0 = off)");
  }
  if (!(spec.mab_min_relative_sd >= 0.0 && std::isfinite(spec.mab_min_relative_sd))) {
    return invalid("mab_min_relative_sd " + show(spec.mab_min_relative_sd) +
                   " must be >= 0 (0 = the sample variance alone)");
  }
  if (spec.job_id) {
    if (spec.job_id->empty()) return invalid("job_id is empty; use null to have one generated");
    if (spec.job_id->rfind(spec.job_id_prefix, 0) != 0) {
      return invalid("job_id '" + *spec.job_id + "' does not start with job_id_prefix '" +
                     spec.job_id_prefix + "'");
    }
  }
  return spec;
}

std::string job_spec_difference(const JobSpec& a, const JobSpec& b) {
#define ZEUS_DIFF(field)                                                  \
  if (!(a.field == b.field)) return #field ": " + show(a.field) + " vs " + show(b.field);
  ZEUS_DIFF(job_id)
  ZEUS_DIFF(job_id_prefix)
  ZEUS_DIFF(batch_sizes)
  ZEUS_DIFF(default_batch_size)
  ZEUS_DIFF(eta_knob)
  ZEUS_DIFF(beta_knob)
  ZEUS_DIFF(target_metric)
  ZEUS_DIFF(higher_is_better_metric)
  ZEUS_DIFF(max_epochs)
  ZEUS_DIFF(num_pruning_rounds)
  ZEUS_DIFF(window_size)
  ZEUS_DIFF(mab_prior_mean)
  ZEUS_DIFF(mab_prior_precision)
  ZEUS_DIFF(mab_num_explorations)
  ZEUS_DIFF(mab_seed)
  ZEUS_DIFF(max_power_w)
  ZEUS_DIFF(number_of_gpus)
  ZEUS_DIFF(gpu_model)
  ZEUS_DIFF(early_stop)
  ZEUS_DIFF(prune_factor)
  ZEUS_DIFF(pruning_beta_knob)
  ZEUS_DIFF(pruning_stop_after_rises)
  ZEUS_DIFF(mab_min_relative_sd)
#undef ZEUS_DIFF
  return "";
}

std::string_view early_stop_mode_name(EarlyStopMode mode) {
  switch (mode) {
    case EarlyStopMode::kPredictive:
      return "predictive";
    case EarlyStopMode::kAfterCrossing:
      return "after-crossing";
    case EarlyStopMode::kKnownEpochCost:
      return "known-epoch-cost";
  }
  return "unknown";
}

bool parse_early_stop_mode(std::string_view name, EarlyStopMode* out) {
  for (EarlyStopMode m : {EarlyStopMode::kPredictive, EarlyStopMode::kAfterCrossing,
                          EarlyStopMode::kKnownEpochCost}) {
    if (early_stop_mode_name(m) == name) {
      *out = m;
      return true;
    }
  }
  return false;
}

std::string_view trial_kind_name(TrialKind kind) {
  switch (kind) {
    case TrialKind::kPruning:
      return "pruning";
    case TrialKind::kConcurrent:
      return "concurrent";
    case TrialKind::kMab:
      return "mab";
  }
  return "unknown";
}

JobSpec upstream_rules(JobSpec spec) {
  spec.early_stop = EarlyStopMode::kAfterCrossing;
  spec.prune_factor.reset();
  spec.pruning_beta_knob.reset();
  spec.pruning_stop_after_rises = 0;
  spec.mab_min_relative_sd = 0.0;
  return spec;
}

std::string_view trial_status_name(TrialStatus status) {
  switch (status) {
    case TrialStatus::kDispatched:
      return "dispatched";
    case TrialStatus::kConverged:
      return "converged";
    case TrialStatus::kNotConverged:
      return "not_converged";
    case TrialStatus::kFailed:
      return "failed";
  }
  return "unknown";
}

bool parse_trial_kind(std::string_view name, TrialKind* out) {
  for (TrialKind k : {TrialKind::kPruning, TrialKind::kConcurrent, TrialKind::kMab}) {
    if (trial_kind_name(k) == name) {
      *out = k;
      return true;
    }
  }
  return false;
}

bool parse_trial_status(std::string_view name, TrialStatus* out) {
  for (TrialStatus s : {TrialStatus::kDispatched, TrialStatus::kConverged,
                        TrialStatus::kNotConverged, TrialStatus::kFailed}) {
    if (trial_status_name(s) == name) {
      *out = s;
      return true;
    }
  }
  return false;
}

}  // namespace zeus
