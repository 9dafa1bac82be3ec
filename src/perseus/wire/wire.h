// The JSON codec of the Perseus runtime's wire messages (zeus/perseus/pfo_runtime_types.h): what
// Zeus
// 0.16's pipeline-frequency client sends decodes unchanged; anything else is refused with the
// field and the reason, which the server answers as FastAPI does a validation error:
//   422 {"detail": [{"loc": ["body", "world_size"], "msg": "...", "type": "value_error"}]}.
//
// Stricter than upstream's pydantic v1 models, on purpose: numbers are not read from strings
// ("3"), fractions are not truncated to integers, booleans are not numbers, unknown fields and
// duplicate keys are refused (a typo would otherwise silently become a default), and sizes are
// bounded. A job's metadata becomes part of its id, which travels in URL paths and names the dump
// folder: it may not hold '/', '\', control characters, nor be longer than kMaxMetadataBytes.
// Units: MHz, s, J. Thread-safety: pure functions. Failure: a WireError, never an exception.
//
//   Decoded<JobInfo> job = decode_job_info(request.body);
//   if (!job) return HttpResponse{422, validation_error_body(job.error())};
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

#include "zeus/perseus/pfo_runtime_types.h"

namespace zeus::pfo {

inline constexpr int kMaxWorldSize = 1 << 16;          // ranks of one job
inline constexpr size_t kMaxMetadataBytes = 200;       // job_metadata
inline constexpr size_t kMaxListLength = 1 << 20;      // entries of any list in a message

// Where a message is wrong (FastAPI's "loc": {"body", "world_size"}, {"query", "rank"}), what is
// wrong ("msg") and pydantic's error type ("type_error.integer", "value_error.missing", ...).
struct WireError {
  std::vector<std::string> loc;
  std::string msg;
  std::string type = "value_error";
};

template <typename T>
using Decoded = tl::expected<T, WireError>;

// POST /register_job: job_id must be "" or absent (the server makes it); degrees and world size
// >= 1 with world_size = pp_degree · dp_degree · tp_degree (at most kMaxWorldSize).
Decoded<JobInfo> decode_job_info(std::string_view body);
// A rank's available_frequencies hold at most this many clocks (422 beyond): a GPU has a few
// hundred at most, and every rank's list is kept while its job lives.
inline constexpr size_t kMaxRankClocks = 512;
// POST /register_rank/{job_id}: ranks >= 0, clocks >= 0 MHz, at most kMaxRankClocks of them.
Decoded<RankInfo> decode_rank_info(std::string_view body);
// GET /schedule answer (what a client reads): rank >= 0, [[name, MHz >= 0], ...].
Decoded<FrequencySchedule> decode_frequency_schedule(std::string_view body);
// POST /result/{job_id}: rank >= 0, finite times and energies; breakdowns default to {}.
Decoded<ProfilingResult> decode_profiling_result(std::string_view body);
// POST /straggler/{job_id} (ours, not upstream's): {"iteration_time_s": T'} with T' > 0, finite,
// and optionally "pipeline": the straggler's dp rank (an integer >= 0; the job checks its range).
struct StragglerRequest {
  double iteration_time_s = 0.0;
  std::optional<int> pipeline;
};
Decoded<StragglerRequest> decode_straggler_time(std::string_view body);
// The query parameter rank of GET /schedule (a decimal integer >= 0; nullptr: missing).
Decoded<int> decode_rank_query(const std::string* value);

// Compact JSON of each message, field for field as upstream writes it.
std::string encode(const JobInfo& job);
std::string encode(const RankInfo& rank);
std::string encode(const FrequencySchedule& schedule);
std::string encode(const ProfilingResult& result);
// A JSON list of messages (the dump files ranks.json, N.sched.json, N.prof.json).
std::string encode_list(const std::vector<RankInfo>& ranks);
std::string encode_list(const std::vector<FrequencySchedule>& schedules);
std::string encode_list(const std::vector<ProfilingResult>& results);

// 422's body: {"detail": [{"loc": [...], "msg": "...", "type": "..."}]}.
std::string validation_error_body(const WireError& error);
// Every other error's body, as FastAPI's HTTPException: {"detail": "..."}.
std::string detail_body(std::string_view detail);

}  // namespace zeus::pfo
