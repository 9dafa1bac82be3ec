// JSON codec of the batch-size optimizer's wire protocol (docs/server.md): job spec, trial id,
// report and report answer, with the wire's field names ("time", "energy", "max_power", ...).
//
// Decoding fills missing optional fields with their defaults, ignores unknown fields, and
// validates the job spec (validate_job_spec). Units on the wire: time in s, energy in J, power
// in W. Thread-safety: pure functions. Failure: kInvalidArgument naming the field (bad JSON,
// wrong type, missing required field, or a value out of range). Lives in library zeus_wire
// (src/wire/), shared by the client, the server and the stores.
//
//   zeus::Result<zeus::JobSpec> spec = zeus::job_spec_from_json(request_body);
//   if (!spec) return http_400(spec.error().message);
//   std::string body = zeus::job_spec_to_json(*spec);   // every field, job_id null or a string
#pragma once

#include <string>
#include <string_view>

#include "zeus/common/result.h"
#include "zeus/optimizer/bso_types.h"

namespace zeus {

// Required: job_id_prefix, batch_sizes, default_batch_size, max_power. Validated.
// Fields the text leaves out keep their value in `defaults` (e.g. upstream_rules(JobSpec{})).
Result<JobSpec> job_spec_from_json(std::string_view json, const JobSpec& defaults = JobSpec{});
std::string job_spec_to_json(const JobSpec& spec);

// {"job_id", "batch_size", "trial_number"}, all required.
Result<TrialId> trial_id_from_json(std::string_view json);
std::string trial_id_to_json(const TrialId& id);

// {"job_id","batch_size","trial_number","time","energy","metric","current_epoch"}, all required.
Result<TrialReport> trial_report_from_json(std::string_view json);
std::string trial_report_to_json(const TrialReport& report);

// {"stop_train", "converged", "message"}.
Result<ReportDecision> report_decision_from_json(std::string_view json);
std::string report_decision_to_json(const ReportDecision& decision);

// A stored trial, for listings: {"job_id","trial_number","batch_size","kind","pruning_round",
// "status","time","energy","cost","epochs","metric"}.
std::string trial_to_json(const Trial& trial);
Result<Trial> trial_from_json(std::string_view json);

}  // namespace zeus
