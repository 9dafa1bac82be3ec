// BsoHttpClient: the batch-size optimizer service (`zeus serve`) reached over HTTP, as a
// BatchSizeService (zeus/optimizer/batch_size_service.h) — the training loop's remote mode — plus
// the
// read-only and admin calls the `zeus bso` verbs use (library zeus_client).
//
// Speaks the wire protocol of docs/server.md (JSON; time in s, energy in J, power in W).
// Thread-safety: one client may be shared by threads; its requests are serialised on one
// connection (use one client per thread for parallel requests). Failure: the server's answer
// mapped to an error code with the server's message — 400 and 413 kInvalidArgument, 409
// kInvalidArgument that is_job_conflict() recognises, 401 kPermissionDenied, 404 kNotFound,
// 5xx kInternal (503 kUnavailable) — and kUnavailable when the server cannot be reached (no
// retry: the caller decides, since a repeated next_batch_size would dispatch a second trial).
//
//   zeus::BsoHttpClientOptions options;  options.token = "s3cret";
//   auto service = zeus::make_http_batch_size_service("http://127.0.0.1:8000", options);
//   if (!service) return fail(service.error());
//   zeus::Result<zeus::TrialId> trial = (*service)->next_batch_size("resnet-abc");
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "zeus/common/result.h"
#include "zeus/optimizer/batch_size_service.h"
#include "zeus/optimizer/bso_types.h"

namespace zeus {

struct BsoHttpClientOptions {
  std::string token;       // non-empty: sent as "Authorization: Bearer <token>"
  double timeout_s = 10.0;  // connect, read and write timeout of each request (> 0)
  // true: keep connections open between requests (fast for many requests in a row; the server
  // holds no thread for an idle connection). false: a new connection per request, like the
  // Python client.
  bool keep_alive = false;
};

class BsoHttpClient : public BatchSizeService {
 public:
  // BatchSizeService over POST /jobs, GET /jobs/batch_size, POST /report, PATCH /trials.
  Result<JobSpec> register_job(const JobSpec& spec) override = 0;
  Result<TrialId> next_batch_size(std::string_view job_id) override = 0;
  Result<ReportDecision> report(const TrialReport& report) override = 0;
  Result<void> end_trial(const TrialId& trial) override = 0;
  // DELETE /jobs?job_id=J: the job and its trials; kNotFound when there is none.
  virtual Result<void> delete_job(std::string_view job_id) = 0;
  // GET /jobs/{job_id}: the job, its arms' beliefs and its trials, as the server's JSON text.
  virtual Result<std::string> get_job_json(std::string_view job_id) = 0;
  // GET /healthz: ok when the server answers and its store is reachable.
  virtual Result<void> health() = 0;
};

// A client of the server at server_url ("http://host:port", optionally with a path prefix such
// as "http://proxy/zeus"; "https://" too). Fails (kInvalidArgument) only on a malformed URL or
// options; nothing is sent until the first call.
Result<std::unique_ptr<BsoHttpClient>> make_bso_http_client(const std::string& server_url,
                                                            BsoHttpClientOptions options = {});

// The same client, as the BatchSizeService the training loop takes.
Result<std::unique_ptr<BatchSizeService>> make_http_batch_size_service(
    const std::string& server_url, BsoHttpClientOptions options = {});

}  // namespace zeus
