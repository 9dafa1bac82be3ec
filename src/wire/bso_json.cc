// JSON codec of the batch-size optimizer (zeus/wire/bso_json.h), over nlohmann_json.
#include "zeus/wire/bso_json.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

namespace zeus {
namespace {

using nlohmann::json;

tl::unexpected<Error> bad(const std::string& what, const std::string& message) {
  return fail(ErrorCode::kInvalidArgument, what + ": " + message);
}

Result<json> parse_object(std::string_view text, const std::string& what) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad(what, "the body is not valid JSON");
  if (!j.is_object()) return bad(what, "the body must be a JSON object");
  return j;
}

// Reads field `name` into *out. Missing: an error when required, else *out keeps its default.
template <typename T>
Result<void> read(const json& j, const char* name, bool required, T* out, const std::string& what) {
  auto it = j.find(name);
  if (it == j.end()) {
    if (required) return bad(what, std::string("field '") + name + "' is missing");
    return ok();
  }
  const std::string type_error = std::string("field '") + name + "' has the wrong type";
  if constexpr (std::is_same_v<T, bool>) {
    if (!it->is_boolean()) return bad(what, type_error + " (expected true or false)");
  } else if constexpr (std::is_integral_v<T>) {
    const std::string range_error = std::string("field '") + name + "' is out of range (" +
                                    std::to_string(std::numeric_limits<T>::min()) + " to " +
                                    std::to_string(std::numeric_limits<T>::max()) + ")";
    if (!it->is_number_integer()) {
      // Accept 64.0 but not 64.5.
      if (!it->is_number_float() || std::trunc(it->get<double>()) != it->get<double>()) {
        return bad(what, type_error + " (expected an integer)");
      }
      const double value = it->get<double>();
      // Both bounds are exact powers of two as doubles; max() + 1 is excluded.
      if (!(value >= static_cast<double>(std::numeric_limits<T>::min()) &&
            value < -static_cast<double>(std::numeric_limits<T>::min()))) {
        return bad(what, range_error);
      }
      *out = static_cast<T>(value);
      return ok();
    }
    if (it->is_number_unsigned() ? it->get<uint64_t>() > static_cast<uint64_t>(
                                                             std::numeric_limits<T>::max())
                                 : (it->get<int64_t>() < std::numeric_limits<T>::min() ||
                                    it->get<int64_t>() > std::numeric_limits<T>::max())) {
      return bad(what, range_error);
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!it->is_number()) return bad(what, type_error + " (expected a number)");
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) return bad(what, type_error + " (expected a string)");
  } else {
    static_assert(std::is_same_v<T, std::vector<int>>);
    if (!it->is_array()) return bad(what, type_error + " (expected a list of integers)");
    for (const json& e : *it) {
      if (!e.is_number_integer()) return bad(what, type_error + " (expected a list of integers)");
      if (e.is_number_unsigned() ? e.get<uint64_t>() > static_cast<uint64_t>(INT32_MAX)
                                 : (e.get<int64_t>() < INT32_MIN || e.get<int64_t>() > INT32_MAX)) {
        return bad(what, std::string("field '") + name + "' holds an integer out of range");
      }
    }
  }
  *out = it->get<T>();
  return ok();
}

// Nullable field: missing keeps the default, null clears it.
template <typename T>
Result<void> read_optional(const json& j, const char* name, std::optional<T>* out,
                           const std::string& what) {
  auto it = j.find(name);
  if (it == j.end()) return ok();
  if (it->is_null()) {
    out->reset();
    return ok();
  }
  T value{};
  ZEUS_TRY(read(j, name, true, &value, what));
  *out = value;
  return ok();
}

template <typename T>
json nullable(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

}  // namespace

Result<JobSpec> job_spec_from_json(std::string_view text, const JobSpec& defaults) {
  const std::string what = "job spec";
  Result<json> parsed = parse_object(text, what);
  if (!parsed) return fail(parsed.error());
  const json& j = *parsed;
  JobSpec s = defaults;
  ZEUS_TRY(read_optional(j, "job_id", &s.job_id, what));
  ZEUS_TRY(read(j, "job_id_prefix", true, &s.job_id_prefix, what));
  ZEUS_TRY(read(j, "batch_sizes", true, &s.batch_sizes, what));
  ZEUS_TRY(read(j, "default_batch_size", true, &s.default_batch_size, what));
  ZEUS_TRY(read(j, "eta_knob", false, &s.eta_knob, what));
  ZEUS_TRY(read_optional(j, "beta_knob", &s.beta_knob, what));
  ZEUS_TRY(read(j, "target_metric", false, &s.target_metric, what));
  ZEUS_TRY(read(j, "higher_is_better_metric", false, &s.higher_is_better_metric, what));
  ZEUS_TRY(read(j, "max_epochs", false, &s.max_epochs, what));
  ZEUS_TRY(read(j, "num_pruning_rounds", false, &s.num_pruning_rounds, what));
  ZEUS_TRY(read(j, "window_size", false, &s.window_size, what));
  ZEUS_TRY(read(j, "mab_prior_mean", false, &s.mab_prior_mean, what));
  ZEUS_TRY(read(j, "mab_prior_precision", false, &s.mab_prior_precision, what));
  ZEUS_TRY(read(j, "mab_num_explorations", false, &s.mab_num_explorations, what));
  ZEUS_TRY(read_optional(j, "mab_seed", &s.mab_seed, what));
  ZEUS_TRY(read(j, "max_power", true, &s.max_power_w, what));
  ZEUS_TRY(read(j, "number_of_gpus", false, &s.number_of_gpus, what));
  ZEUS_TRY(read(j, "gpu_model", false, &s.gpu_model, what));
  // Ours, optional (a Zeus 0.16 client omits them and gets the defaults of
  // zeus/optimizer/bso_types.h).
  std::string early_stop(early_stop_mode_name(s.early_stop));
  ZEUS_TRY(read(j, "early_stop", false, &early_stop, what));
  if (!parse_early_stop_mode(early_stop, &s.early_stop)) {
    return bad(what, "field 'early_stop' is '" + early_stop +
                         "'; use 'predictive' (default) or 'after-crossing'");
  }
  ZEUS_TRY(read_optional(j, "prune_factor", &s.prune_factor, what));
  ZEUS_TRY(read_optional(j, "pruning_beta_knob", &s.pruning_beta_knob, what));
  ZEUS_TRY(read(j, "pruning_stop_after_rises", false, &s.pruning_stop_after_rises, what));
  ZEUS_TRY(read(j, "mab_min_relative_sd", false, &s.mab_min_relative_sd, what));
  return validate_job_spec(std::move(s));
}

std::string job_spec_to_json(const JobSpec& s) {
  json j = {{"job_id", nullable(s.job_id)},
            {"job_id_prefix", s.job_id_prefix},
            {"batch_sizes", s.batch_sizes},
            {"default_batch_size", s.default_batch_size},
            {"eta_knob", s.eta_knob},
            {"beta_knob", nullable(s.beta_knob)},
            {"target_metric", s.target_metric},
            {"higher_is_better_metric", s.higher_is_better_metric},
            {"max_epochs", s.max_epochs},
            {"num_pruning_rounds", s.num_pruning_rounds},
            {"window_size", s.window_size},
            {"mab_prior_mean", s.mab_prior_mean},
            {"mab_prior_precision", s.mab_prior_precision},
            {"mab_num_explorations", s.mab_num_explorations},
            {"mab_seed", nullable(s.mab_seed)},
            {"max_power", s.max_power_w},
            {"number_of_gpus", s.number_of_gpus},
            {"gpu_model", s.gpu_model},
            {"early_stop", std::string(early_stop_mode_name(s.early_stop))},
            {"prune_factor", nullable(s.prune_factor)},
            {"pruning_beta_knob", nullable(s.pruning_beta_knob)},
            {"pruning_stop_after_rises", s.pruning_stop_after_rises},
            {"mab_min_relative_sd", s.mab_min_relative_sd}};
  return j.dump();
}

Result<TrialId> trial_id_from_json(std::string_view text) {
  const std::string what = "trial";
  Result<json> j = parse_object(text, what);
  if (!j) return fail(j.error());
  TrialId id;
  ZEUS_TRY(read(*j, "job_id", true, &id.job_id, what));
  ZEUS_TRY(read(*j, "batch_size", true, &id.batch_size, what));
  ZEUS_TRY(read(*j, "trial_number", true, &id.trial_number, what));
  return id;
}

std::string trial_id_to_json(const TrialId& id) {
  return json{{"job_id", id.job_id}, {"batch_size", id.batch_size},
              {"trial_number", id.trial_number}}
      .dump();
}

Result<TrialReport> trial_report_from_json(std::string_view text) {
  const std::string what = "report";
  Result<json> j = parse_object(text, what);
  if (!j) return fail(j.error());
  TrialReport r;
  ZEUS_TRY(read(*j, "job_id", true, &r.job_id, what));
  ZEUS_TRY(read(*j, "batch_size", true, &r.batch_size, what));
  ZEUS_TRY(read(*j, "trial_number", true, &r.trial_number, what));
  ZEUS_TRY(read(*j, "time", true, &r.time_s, what));
  ZEUS_TRY(read(*j, "energy", true, &r.energy_j, what));
  ZEUS_TRY(read(*j, "metric", true, &r.metric, what));
  ZEUS_TRY(read(*j, "current_epoch", true, &r.current_epoch, what));
  return r;
}

std::string trial_report_to_json(const TrialReport& r) {
  return json{{"job_id", r.job_id},   {"batch_size", r.batch_size},
              {"trial_number", r.trial_number}, {"time", r.time_s},
              {"energy", r.energy_j}, {"metric", r.metric},
              {"current_epoch", r.current_epoch}}
      .dump();
}

Result<ReportDecision> report_decision_from_json(std::string_view text) {
  const std::string what = "report answer";
  Result<json> j = parse_object(text, what);
  if (!j) return fail(j.error());
  ReportDecision d;
  ZEUS_TRY(read(*j, "stop_train", true, &d.stop_train, what));
  ZEUS_TRY(read(*j, "converged", true, &d.converged, what));
  ZEUS_TRY(read(*j, "message", false, &d.message, what));
  return d;
}

std::string report_decision_to_json(const ReportDecision& d) {
  return json{{"stop_train", d.stop_train}, {"converged", d.converged}, {"message", d.message}}
      .dump();
}

std::string trial_to_json(const Trial& t) {
  return json{{"job_id", t.job_id},
              {"trial_number", t.trial_number},
              {"batch_size", t.batch_size},
              {"kind", std::string(trial_kind_name(t.kind))},
              {"pruning_round", t.pruning_round},
              {"status", std::string(trial_status_name(t.status))},
              {"time", t.time_s},
              {"energy", t.energy_j},
              {"cost", t.cost},
              {"epochs", t.epochs},
              {"metric", t.metric}}
      .dump();
}

Result<Trial> trial_from_json(std::string_view text) {
  const std::string what = "trial";
  Result<json> j = parse_object(text, what);
  if (!j) return fail(j.error());
  Trial t;
  std::string kind, status;
  ZEUS_TRY(read(*j, "job_id", true, &t.job_id, what));
  ZEUS_TRY(read(*j, "trial_number", true, &t.trial_number, what));
  ZEUS_TRY(read(*j, "batch_size", true, &t.batch_size, what));
  ZEUS_TRY(read(*j, "kind", true, &kind, what));
  ZEUS_TRY(read(*j, "pruning_round", false, &t.pruning_round, what));
  ZEUS_TRY(read(*j, "status", true, &status, what));
  ZEUS_TRY(read(*j, "time", false, &t.time_s, what));
  ZEUS_TRY(read(*j, "energy", false, &t.energy_j, what));
  ZEUS_TRY(read(*j, "cost", false, &t.cost, what));
  ZEUS_TRY(read(*j, "epochs", false, &t.epochs, what));
  ZEUS_TRY(read(*j, "metric", false, &t.metric, what));
  if (!parse_trial_kind(kind, &t.kind)) return bad(what, "unknown kind '" + kind + "'");
  if (!parse_trial_status(status, &t.status)) return bad(what, "unknown status '" + status + "'");
  return t;
}

}  // namespace zeus
