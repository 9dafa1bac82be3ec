// Strict decoding of the batch-size service's requests: JSON bodies and the job ids of query
// strings and paths (docs/server.md), before anything reaches the optimizer.
//
// On top of the wire codec (zeus/wire/bso_json.h: types, required fields, job-spec validation) the
// decoder refuses unknown fields (a typo such as "eta_knb" would otherwise silently become the
// default), strings that are too long or hold control characters, more than kMaxBatchSizes batch
// sizes, and non-finite or negative time and energy. Existing Zeus clients send only known
// fields, so they are unaffected. Units: time in s, energy in J, max_power in W.
// Thread-safety: pure functions. Failure: kInvalidArgument with a message naming the field (the
// server answers it as 400 {"message": ...}); never an exception, never a crash, for any input.
//
//   Result<TrialReport> r = server::decode_report(request_body);
//   if (!r) return bad_request(r.error().message);
//   Result<std::string> id = server::decode_job_id(query_value, "query parameter job_id");
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "zeus/common/result.h"
#include "zeus/optimizer/bso_types.h"

namespace zeus::server {

inline constexpr size_t kMaxIdBytes = 256;       // job_id, job_id_prefix, gpu_model
inline constexpr size_t kMaxBatchSizes = 1024;   // entries of batch_sizes

// POST /jobs: a job spec; validated, batch sizes sorted.
// Fields the body leaves out take their value from `defaults`.
Result<JobSpec> decode_job_spec(std::string_view body, const JobSpec& defaults = JobSpec{});

// PATCH /trials: {"job_id", "batch_size", "trial_number"}.
Result<TrialId> decode_trial_id(std::string_view body);

// POST /report: {"job_id","batch_size","trial_number","time","energy","metric","current_epoch"}.
Result<TrialReport> decode_report(std::string_view body);

// A job id from a query string or a path (already percent-decoded): non-empty, at most
// kMaxIdBytes, valid UTF-8, no control characters. `where` names it in the error.
Result<std::string> decode_job_id(std::string_view value, std::string_view where);

}  // namespace zeus::server
