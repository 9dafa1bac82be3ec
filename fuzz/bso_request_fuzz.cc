// libFuzzer target: the batch-size service's request decoding and routing (server/
// request_decoder.h, server/api.h). The first byte picks the mode:
//   0-2: one body through decode_job_spec / decode_trial_id / decode_report; whatever decodes
//        must re-encode (zeus/wire/bso_json.h) and decode to the same value;
//   3:   a job id from a query string (decode_job_id);
//   4+:  a session of up to 8 requests against a fresh in-memory service, separated by NUL
//        bytes, each "METHOD /path?query\n<body>": no answer may be a 5xx, and every JSON
//        answer must parse.
// A finding is a crash, a sanitizer report, or one of these properties failing (abort).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "server/api.h"
#include "server/request_decoder.h"
#include "zeus/wire/bso_json.h"

namespace {

using namespace zeus;

[[noreturn]] void property_failed(const char* what, std::string_view input) {
  std::fprintf(stderr, "bso_request_fuzz: %s\ninput: %.*s\n", what,
               static_cast<int>(std::min<size_t>(input.size(), 2000)), input.data());
  std::abort();
}

void job_spec_round_trip(std::string_view body) {
  Result<JobSpec> spec = server::decode_job_spec(body);
  if (!spec) return;
  Result<JobSpec> again = server::decode_job_spec(job_spec_to_json(*spec));
  if (!again || !(*again == *spec)) property_failed("job spec does not round-trip", body);
}

void trial_id_round_trip(std::string_view body) {
  Result<TrialId> id = server::decode_trial_id(body);
  if (!id) return;
  Result<TrialId> again = server::decode_trial_id(trial_id_to_json(*id));
  if (!again || !(*again == *id)) property_failed("trial id does not round-trip", body);
}

void report_round_trip(std::string_view body) {
  Result<TrialReport> r = server::decode_report(body);
  if (!r) return;
  Result<TrialReport> a = server::decode_report(trial_report_to_json(*r));
  if (!a || a->job_id != r->job_id || a->batch_size != r->batch_size ||
      a->trial_number != r->trial_number || a->time_s != r->time_s ||
      a->energy_j != r->energy_j || a->metric != r->metric ||
      a->current_epoch != r->current_epoch) {
    property_failed("report does not round-trip", body);
  }
}

// "METHOD /path?a=1&b=2\nbody" -> ApiRequest (query values taken as they are, not decoded).
server::ApiRequest parse_request(std::string_view text) {
  server::ApiRequest req;
  const size_t newline = text.find('\n');
  const std::string_view line = text.substr(0, newline);
  if (newline != std::string_view::npos) req.body = std::string(text.substr(newline + 1));
  const size_t space = line.find(' ');
  req.method = std::string(line.substr(0, space));
  std::string_view target = space == std::string_view::npos ? "/" : line.substr(space + 1);
  const size_t question = target.find('?');
  req.path = std::string(target.substr(0, question));
  if (question != std::string_view::npos) {
    std::string_view query = target.substr(question + 1);
    while (!query.empty()) {
      const size_t amp = query.find('&');
      const std::string_view pair = query.substr(0, amp);
      const size_t eq = pair.find('=');
      req.query.emplace_back(std::string(pair.substr(0, eq)),
                             eq == std::string_view::npos ? "" : std::string(pair.substr(eq + 1)));
      if (amp == std::string_view::npos) break;
      query.remove_prefix(amp + 1);
    }
  }
  if (req.method.size() > 1 && req.method.back() == '!') {  // "POST!": send the token
    req.method.pop_back();
    req.authorization = "Bearer fuzz";
  }
  return req;
}

void session(std::string_view input) {
  std::unique_ptr<Store> store = make_memory_store();
  BatchSizeOptimizer bso(*store, [] { return uint64_t{7}; });
  server::ServerMetrics metrics;
  server::ApiOptions options;
  options.token = "fuzz";
  server::Api api(*store, bso, &metrics, options);
  for (int i = 0; i < 8 && !input.empty(); ++i) {
    const size_t nul = input.find('\0');
    const std::string_view one = input.substr(0, nul);
    const server::ApiResponse r = api.handle(parse_request(one));
    if (r.status >= 500) property_failed("an answer was a 5xx", one);
    if (r.content_type == "application/json" &&
        nlohmann::json::parse(r.body, nullptr, false).is_discarded()) {
      property_failed("a JSON answer does not parse", one);
    }
    if (nul == std::string_view::npos) break;
    input.remove_prefix(nul + 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 5) {
    case 0:
      job_spec_round_trip(rest);
      break;
    case 1:
      trial_id_round_trip(rest);
      break;
    case 2:
      report_round_trip(rest);
      break;
    case 3:
      (void)server::decode_job_id(rest, "fuzz");
      break;
    default:
      session(rest);
      break;
  }
  return 0;
}
