// Batch-size optimizer types: the job spec, a trial, a report and its decision.
//
// A recurring training job is registered once with a JobSpec; each recurrence asks for a batch
// size (a Trial is dispatched), reports cumulative time and energy after each evaluation, and is
// told when to stop. Units: time_s (s), energy_j (J), max_power_w (W, already × number of GPUs),
// cost in J (η·energy_j + (1 − η)·max_power_w·time_s). The JSON wire names (docs/server.md:
// "time", "energy", "max_power", ...) are produced by zeus/wire/bso_json.h.
// Thread-safety: plain values. Failure: validate_job_spec() returns kInvalidArgument naming the
// field and the fix.
//
//   zeus::JobSpec spec;  spec.job_id_prefix = "resnet";  spec.batch_sizes = {32, 64, 128};
//   spec.default_batch_size = 64;  spec.max_power_w = 300;
//   zeus::Result<zeus::JobSpec> valid = zeus::validate_job_spec(spec);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/common/result.h"

namespace zeus {

// When an over-budget trial stops (the rules are in src/optimizer/batch_size/early_stop.h).
enum class EarlyStopMode {
  kPredictive,     // "predictive": stop when cost so far + expected next epoch > β·min_cost
  kAfterCrossing,  // "after-crossing": stop after the epoch that crossed β·min_cost (Zeus 0.16)
  kKnownEpochCost,  // "known-epoch-cost": upstream's legacy simulator; simulation only
};
std::string_view early_stop_mode_name(EarlyStopMode mode);
// Inverse of early_stop_mode_name; false on an unknown name.
bool parse_early_stop_mode(std::string_view name, EarlyStopMode* out);

// Configuration of a recurring job. Defaults follow docs/server.md; the fields after
// gpu_model are ours (optional on the wire; a Zeus 0.16 client that omits them gets the
// defaults below, documented in docs/simulate.md, which measured them).
struct JobSpec {
  std::optional<std::string> job_id;   // null: generated at registration as prefix + random hex
  std::string job_id_prefix;           // job_id must start with it
  std::vector<int> batch_sizes;        // non-empty, positive, distinct; kept sorted ascending
  int default_batch_size = 0;          // one of batch_sizes
  double eta_knob = 0.5;               // η in [0, 1]: weight of energy against time
  std::optional<double> beta_knob = 2.0;  // > 0; null = no early stopping
  double target_metric = 0.5;
  bool higher_is_better_metric = true;
  int max_epochs = 100;                // >= 1
  int num_pruning_rounds = 2;          // >= 0
  int window_size = 0;                 // >= 0; 0 = all history
  double mab_prior_mean = 0.0;         // prior mean of an arm's cost (J)
  double mab_prior_precision = 0.0;    // >= 0; 0 = flat prior
  int mab_num_explorations = 2;        // >= 0
  std::optional<int64_t> mab_seed;     // set: the job's random stream is reproducible
  double max_power_w = 0.0;            // > 0; W, already × number_of_gpus
  int number_of_gpus = 1;              // >= 1
  std::string gpu_model;
  EarlyStopMode early_stop = EarlyStopMode::kPredictive;  // kKnownEpochCost is refused
  // Pruning rounds after the first re-run only the survivors whose converged cost in the
  // previous round is within prune_factor × the least converged cost so far (>= 1; null = every
  // survivor, as upstream). β reproduces "skip what already exceeds the early-stop bound"; the
  // default 1.5 was measured on the six paper workloads (docs/simulate.md).
  std::optional<double> prune_factor = 1.5;
  // The early-stop β of pruning explorations (> 0; null = beta_knob): an exploration costing more
  // than pruning_beta_knob × the least converged cost so far is stopped and pruned.
  std::optional<double> pruning_beta_knob;
  // A direction of a pruning round stops after this many consecutive converged explorations each
  // costlier than the one before (the cost is typically convex in b: the minimum lies behind);
  // 0 = off (upstream: a direction stops only at a batch size that does not converge). The default
  // 3 was measured on the six paper workloads (docs/simulate.md).
  int pruning_stop_after_rises = 3;
  // Per-observation standard deviation of a bandit arm at least this fraction of its mean cost
  // (>= 0; 0 = upstream: the sample variance, which two equal costs collapse to zero).
  double mab_min_relative_sd = 0.0;

  bool operator==(const JobSpec&) const = default;
};

// Checks every field and sorts batch_sizes. kInvalidArgument names the first bad field.
Result<JobSpec> validate_job_spec(JobSpec spec);

// A JobSpec whose rule fields (early_stop, prune_factor, pruning_beta_knob,
// pruning_stop_after_rises, mab_min_relative_sd) are the original Zeus server's: stop after the
// epoch that crosses β·min, re-run every survivor, a direction ends only where a run does not
// converge, the sample variance. `zeus serve --job-rules upstream` registers the jobs of clients
// that do not send these fields (Zeus 0.16's) with them.
JobSpec upstream_rules(JobSpec spec);

// Names the first field where two specs differ ("eta_knob: 0.5 vs 0.7"), or "" if equal.
std::string job_spec_difference(const JobSpec& a, const JobSpec& b);

// Where a trial's batch size came from.
enum class TrialKind {
  kPruning,     // an exploration step of the pruning rounds
  kConcurrent,  // asked for while a pruning step was still running: the best size known
  kMab,         // chosen by Gaussian Thompson sampling
};

enum class TrialStatus {
  kDispatched,    // handed out; training may be running
  kConverged,     // reached the target metric within the cost bound
  kNotConverged,  // stopped early, hit max_epochs, or reached the target over the bound
  kFailed,        // abandoned by the client (training died) before it ended
};

std::string_view trial_kind_name(TrialKind kind);      // "pruning", "concurrent", "mab"
std::string_view trial_status_name(TrialStatus status);  // "dispatched", "converged", ...
// Inverse of the name functions; false on an unknown name.
bool parse_trial_kind(std::string_view name, TrialKind* out);
bool parse_trial_status(std::string_view name, TrialStatus* out);

// One run of a recurring job with one batch size. The measurements are those of the last report
// (cumulative for the trial); cost is meaningful once the trial has ended (or been reported).
struct Trial {
  std::string job_id;
  int trial_number = 0;   // 1, 2, ... per job, in dispatch order
  int batch_size = 0;
  TrialKind kind = TrialKind::kMab;
  int pruning_round = 0;  // 1-based round for kPruning trials, 0 otherwise
  TrialStatus status = TrialStatus::kDispatched;
  double time_s = 0.0;
  double energy_j = 0.0;
  double cost = 0.0;      // J: η·energy_j + (1 − η)·max_power_w·time_s
  int epochs = 0;         // current_epoch of the last report
  double metric = 0.0;
  double dispatched_unix_s = 0.0;  // wall time of dispatch, s since the Unix epoch; 0 = unknown

  bool ended() const {
    return status == TrialStatus::kConverged || status == TrialStatus::kNotConverged;
  }
  bool operator==(const Trial&) const = default;
};

// Identifies a dispatched trial (the answer of GET /jobs/batch_size, the body of PATCH /trials).
struct TrialId {
  std::string job_id;
  int batch_size = 0;
  int trial_number = 0;
  bool operator==(const TrialId&) const = default;
};

// A training progress report (POST /report): time and energy cumulative for the trial.
struct TrialReport {
  std::string job_id;
  int batch_size = 0;
  int trial_number = 0;
  double time_s = 0.0;
  double energy_j = 0.0;
  double metric = 0.0;
  int current_epoch = 0;  // epochs finished so far
};

// The answer to a report.
struct ReportDecision {
  bool stop_train = false;
  bool converged = false;
  std::string message;
  bool operator==(const ReportDecision&) const = default;
};

// Profiled epoch cost of one batch size on a GPU model (paper §7, heterogeneous GPUs).
struct EpochProfilePoint {
  int batch_size = 0;
  double epoch_time_s = 0.0;  // time of one epoch (at the power limit the job will use)
  double avg_power_w = 0.0;   // average power over that epoch, all GPUs together
};

// What a job needs to move to another GPU model.
struct GpuEpochProfile {
  std::string gpu_model;
  double max_power_w = 0.0;  // W, already × number_of_gpus
  int number_of_gpus = 1;
  std::vector<EpochProfilePoint> points;  // one per batch size with stored observations
};

}  // namespace zeus
