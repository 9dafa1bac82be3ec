// Api: the batch-size service's routes as a plain function from request to response, with no
// sockets — the HTTP server (zeus/server/bso_server.h) feeds it, tests and the fuzzer call it
// directly.
//
// Routes (docs/server.md plus the extras): POST /jobs (201 created, 200 identical, 409
// conflict), GET /jobs/batch_size?job_id=J, POST /report, PATCH /trials (200 `null`), DELETE
// /jobs?job_id=J (200 `null`, 404), GET /jobs (list), GET /jobs/{job_id} (job, beliefs, trials),
// GET /healthz, GET /metrics, GET / (dashboard). Errors are {"message"}: 400 bad input, 401
// missing/wrong token, 404 unknown job/trial/route, 405 wrong method, 409 conflict, 500 internal,
// 503 store unavailable. Bad input is never 500. With a token set, every request that changes
// state — POST, PATCH, DELETE and GET /jobs/batch_size (it dispatches a trial) — needs
// "Authorization: Bearer <token>"; the read-only routes stay open.
// Thread-safety: handle() may be called from many threads at once.
//
//   Api api(store, optimizer, &metrics, ApiOptions{"s3cret"});
//   ApiResponse r = api.handle({"GET", "/healthz", {}, "", ""});   // r.status == 200
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/metrics.h"
#include "zeus/optimizer/batch_size_optimizer.h"
#include "zeus/optimizer/bso_store.h"

namespace zeus::server {

struct ApiRequest {
  std::string method;  // "GET", "POST", ... (HEAD is answered as GET by the HTTP layer)
  std::string path;    // percent-decoded, without the query string
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in order
  std::string authorization;  // the Authorization header, "" when absent
  std::string body;
};

struct ApiResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

struct ApiOptions {
  std::string token;       // non-empty: state-changing requests need "Bearer <token>"
  JobSpec job_defaults;    // what a registration leaves out (e.g. upstream_rules(JobSpec{}))
  // What GET /healthz reports; unset: the store is pinged (the server sets a HealthProbe's).
  std::function<Result<void>()> health;
};

class Api {
 public:
  // store, optimizer (over that store) and metrics (may be null) must outlive the Api.
  Api(Store& store, BatchSizeOptimizer& optimizer, ServerMetrics* metrics, ApiOptions options);

  // Answers one request; records it in the metrics.
  ApiResponse handle(const ApiRequest& request);

  // The route template of a path ("/jobs/{job_id}", "other" for unknown paths): the metrics
  // label, bounded whatever the client sends.
  static std::string_view route_of(std::string_view path);

 private:
  ApiResponse dispatch(const ApiRequest& request, std::string_view route);
  bool authorized(const ApiRequest& request) const;

  Store& store_;
  BatchSizeOptimizer& optimizer_;
  ServerMetrics* metrics_;
  ApiOptions options_;
};

}  // namespace zeus::server
