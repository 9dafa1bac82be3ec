// Strict request decoding of the batch-size service (server/request_decoder.h).
#include "server/request_decoder.h"

#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <span>

#include "common/strict_json.h"
#include "zeus/wire/bso_json.h"

namespace zeus::server {
namespace {

using nlohmann::json;

constexpr std::array kJobSpecFields = {
    "job_id", "job_id_prefix", "batch_sizes", "default_batch_size", "eta_knob", "beta_knob",
    "target_metric", "higher_is_better_metric", "max_epochs", "num_pruning_rounds", "window_size",
    "mab_prior_mean", "mab_prior_precision", "mab_num_explorations", "mab_seed", "max_power",
    "number_of_gpus", "gpu_model",
    // Ours (optional; docs/server.md): the rules of early stopping, pruning and the bandit.
    "early_stop", "prune_factor", "pruning_beta_knob", "pruning_stop_after_rises",
    "mab_min_relative_sd"};
constexpr std::array kTrialIdFields = {"job_id", "batch_size", "trial_number"};
constexpr std::array kReportFields = {"job_id", "batch_size", "trial_number", "time",
                                      "energy", "metric",     "current_epoch"};

tl::unexpected<Error> bad(std::string_view what, const std::string& message) {
  return fail(ErrorCode::kInvalidArgument, std::string(what) + ": " + message);
}

// Length of the UTF-8 sequence starting at s[i], or 0 when it is not valid UTF-8.
size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n;
  unsigned min_code;
  unsigned code;
  if ((c & 0xE0) == 0xC0) {
    n = 2, code = c & 0x1F, min_code = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, code = c & 0x0F, min_code = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, code = c & 0x07, min_code = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  if (code < min_code || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

// A name-like string: bounded length, valid UTF-8, no control characters.
Result<void> check_text(std::string_view value, std::string_view field, std::string_view what,
                        bool allow_empty) {
  const std::string name = "'" + std::string(field) + "'";
  if (value.empty() && !allow_empty) return bad(what, name + " is empty");
  if (value.size() > kMaxIdBytes) {
    return bad(what, name + " is " + std::to_string(value.size()) + " bytes long; the limit is " +
                         std::to_string(kMaxIdBytes));
  }
  for (size_t i = 0; i < value.size();) {
    const size_t n = utf8_sequence_length(value, i);
    if (n == 0) return bad(what, name + " is not valid UTF-8");
    if (n == 1 && (static_cast<unsigned char>(value[i]) < 0x20 || value[i] == 0x7F)) {
      return bad(what, name + " holds a control character");
    }
    i += n;
  }
  return ok();
}

// The body must be a JSON object whose keys are all in `fields`, none of them twice.
Result<void> check_fields(std::string_view body, std::span<const char* const> fields,
                          std::string_view what) {
  Result<json> object = parse_strict_json_object(body);
  if (!object) return bad(what, object.error().message);
  Result<void> known = check_known_fields(*object, fields);
  if (!known) return bad(what, known.error().message);
  return ok();
}

Result<void> check_trial_id(const TrialId& id, std::string_view what) {
  ZEUS_TRY(check_text(id.job_id, "job_id", what, false));
  if (id.batch_size <= 0) return bad(what, "'batch_size' must be > 0");
  if (id.trial_number <= 0) return bad(what, "'trial_number' must be >= 1");
  return ok();
}

}  // namespace

Result<JobSpec> decode_job_spec(std::string_view body, const JobSpec& defaults) {
  constexpr std::string_view what = "job spec";
  ZEUS_TRY(check_fields(body, kJobSpecFields, what));
  Result<JobSpec> spec = job_spec_from_json(body, defaults);
  if (!spec) return fail(spec.error());
  if (spec->job_id) ZEUS_TRY(check_text(*spec->job_id, "job_id", what, false));
  ZEUS_TRY(check_text(spec->job_id_prefix, "job_id_prefix", what, true));
  ZEUS_TRY(check_text(spec->gpu_model, "gpu_model", what, true));
  if (spec->batch_sizes.size() > kMaxBatchSizes) {
    return bad(what, "'batch_sizes' lists " + std::to_string(spec->batch_sizes.size()) +
                         " sizes; the limit is " + std::to_string(kMaxBatchSizes));
  }
  return spec;
}

Result<TrialId> decode_trial_id(std::string_view body) {
  constexpr std::string_view what = "trial";
  ZEUS_TRY(check_fields(body, kTrialIdFields, what));
  Result<TrialId> id = trial_id_from_json(body);
  if (!id) return fail(id.error());
  ZEUS_TRY(check_trial_id(*id, what));
  return id;
}

Result<TrialReport> decode_report(std::string_view body) {
  constexpr std::string_view what = "report";
  ZEUS_TRY(check_fields(body, kReportFields, what));
  Result<TrialReport> r = trial_report_from_json(body);
  if (!r) return fail(r.error());
  ZEUS_TRY(check_trial_id({r->job_id, r->batch_size, r->trial_number}, what));
  if (!(std::isfinite(r->time_s) && r->time_s >= 0)) {
    return bad(what, "'time' must be a finite number of seconds >= 0 (cumulative for the trial)");
  }
  if (!(std::isfinite(r->energy_j) && r->energy_j >= 0)) {
    return bad(what, "'energy' must be a finite number of joules >= 0 (cumulative for the trial)");
  }
  if (!std::isfinite(r->metric)) return bad(what, "'metric' must be a finite number");
  if (r->current_epoch < 0) return bad(what, "'current_epoch' must be >= 0");
  return r;
}

Result<std::string> decode_job_id(std::string_view value, std::string_view where) {
  ZEUS_TRY(check_text(value, "job_id", where, false));
  return std::string(value);
}

}  // namespace zeus::server
