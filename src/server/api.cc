// Api: routing, authorisation and the answers of the batch-size service (server/api.h).
#include "server/api.h"

#include <chrono>
#include <regex>
#include <nlohmann/json.hpp>

#include "server/dashboard.h"
#include "server/job_view.h"
#include "server/json_text.h"
#include "server/request_decoder.h"
#include "zeus/common/log.h"
#include "zeus/wire/bso_json.h"

namespace zeus::server {
namespace {

ApiResponse json_answer(int status, std::string body) {
  ApiResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

ApiResponse error_answer(int status, const std::string& message) {
  return json_answer(status, error_json(message));
}

// What a client is told when the store cannot be reached: the store's message with every URL
// taken out (a database URL names its user and host, and its password when redaction could not
// tell it apart). The log keeps the whole message.
std::string unavailable_text(const std::string& message) {
  static const std::regex url(R"([A-Za-z][A-Za-z0-9+.-]*://\S*[^\s:,;)])");
  return "the store is unavailable (" + std::regex_replace(message, url, "<database URL>") +
         "); retry later, and see the server's log";
}

// The HTTP status of an error of the optimizer, the store or the decoder.
ApiResponse from_error(const Error& error) {
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
      return error_answer(is_job_conflict(error) ? 409 : 400, error.message);
    case ErrorCode::kNotFound:
      return error_answer(404, error.message);
    case ErrorCode::kUnavailable:
      log_warning("bso service: store unavailable: " + error.message);
      return error_answer(503, unavailable_text(error.message));
    default:
      log_error("bso service: internal error: " + error.message);
      return error_answer(500, error.message);
  }
}

ApiResponse method_not_allowed(std::string_view method, std::string_view route,
                               const std::string& allowed) {
  ApiResponse r = error_answer(405, "method " + std::string(method) + " is not allowed on " +
                                        std::string(route) + "; use " + allowed);
  r.headers.emplace_back("Allow", allowed);
  return r;
}

// The job_id query parameter, decoded and checked.
Result<std::string> query_job_id(const ApiRequest& request) {
  for (const auto& [name, value] : request.query) {
    if (name == "job_id") return decode_job_id(value, "query parameter job_id");
  }
  return fail(ErrorCode::kInvalidArgument,
              "query parameter job_id is missing; add ?job_id=<the job's id>");
}

// True when method is one of the comma-separated methods in allowed ("GET, POST").
bool method_in(std::string_view method, std::string_view allowed) {
  while (!allowed.empty()) {
    const size_t comma = allowed.find(',');
    std::string_view one = allowed.substr(0, comma);
    while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
    if (one == method) return true;
    if (comma == std::string_view::npos) break;
    allowed.remove_prefix(comma + 1);
  }
  return false;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

}  // namespace

Api::Api(Store& store, BatchSizeOptimizer& optimizer, ServerMetrics* metrics, ApiOptions options)
    : store_(store), optimizer_(optimizer), metrics_(metrics), options_(std::move(options)) {}

std::string_view Api::route_of(std::string_view path) {
  for (std::string_view route :
       {"/", "/healthz", "/metrics", "/jobs", "/jobs/batch_size", "/report", "/trials"}) {
    if (path == route) return route;
  }
  if (path.size() > 6 && path.substr(0, 6) == "/jobs/") return "/jobs/{job_id}";
  return "other";
}

bool Api::authorized(const ApiRequest& request) const {
  if (options_.token.empty()) return true;
  std::string_view header = request.authorization;
  constexpr std::string_view kScheme = "bearer ";
  if (header.size() < kScheme.size()) return false;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) != kScheme[i]) return false;
  }
  header.remove_prefix(kScheme.size());
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  while (!header.empty() && header.back() == ' ') header.remove_suffix(1);
  return constant_time_equal(header, options_.token);
}

ApiResponse Api::handle(const ApiRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  const std::string_view route = route_of(request.path);
  ApiResponse response = dispatch(request, route);
  if (metrics_) {
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    const bool known_method = request.method == "GET" || request.method == "POST" ||
                              request.method == "PATCH" || request.method == "DELETE";
    metrics_->observe_request(route, known_method ? request.method : "other", response.status,
                              elapsed.count());
  }
  return response;
}

ApiResponse Api::dispatch(const ApiRequest& request, std::string_view route) {
  const std::string& method = request.method;
  if (route == "other") {
    return error_answer(404, "no route " + method + " " + request.path +
                                 "; see GET /jobs, GET /jobs/{job_id}, POST /jobs, GET "
                                 "/jobs/batch_size, POST /report, PATCH /trials, DELETE /jobs");
  }
  // The allowed methods of each route, and whether it changes state (needs the token).
  std::string allowed;
  bool mutating = false;
  if (route == "/" || route == "/healthz" || route == "/metrics" || route == "/jobs/{job_id}") {
    allowed = "GET";
  } else if (route == "/jobs") {
    allowed = "GET, POST, DELETE";
    mutating = method != "GET";
  } else if (route == "/jobs/batch_size") {
    allowed = "GET";
    mutating = true;
  } else if (route == "/report") {
    allowed = "POST";
    mutating = true;
  } else {
    allowed = "PATCH";
    mutating = true;
  }
  if (!method_in(method, allowed)) {
    return method_not_allowed(method, route, allowed);
  }
  if (mutating && !authorized(request)) {
    // A missing token and a wrong one need different fixes: the answer says which.
    ApiResponse r = error_answer(
        401, request.authorization.empty()
                 ? "this server needs a token: send the header 'Authorization: Bearer <token>'"
                 : "the bearer token sent does not match this server's token");
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    return r;
  }

  if (route == "/") {
    ApiResponse r;
    r.body = std::string(dashboard_html());
    r.content_type = "text/html; charset=utf-8";
    return r;
  }
  if (route == "/healthz") {
    Result<void> alive = options_.health ? options_.health() : store_.ping();
    if (!alive) {
      return error_answer(503, unavailable_text(alive.error().message));
    }
    return json_answer(200, R"({"status":"ok"})");
  }
  if (route == "/metrics") {
    Result<StoreTotals> totals = store_totals(store_);
    if (!totals) return from_error(totals.error());
    ApiResponse r;
    r.body = metrics_ ? metrics_->render(*totals) : "";
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return r;
  }
  if (route == "/jobs" && method == "GET") {
    Result<std::string> list = job_list_json(store_);
    if (!list) return from_error(list.error());
    return json_answer(200, std::move(*list));
  }
  if (route == "/jobs" && method == "POST") {
    Result<JobSpec> spec = decode_job_spec(request.body, options_.job_defaults);
    if (!spec) return from_error(spec.error());
    Result<Registration> reg = optimizer_.register_job(*spec);
    if (!reg) return from_error(reg.error());
    return json_answer(reg->created ? 201 : 200, job_spec_to_json(reg->job));
  }
  if (route == "/jobs") {  // DELETE
    Result<std::string> id = query_job_id(request);
    if (!id) return from_error(id.error());
    Result<void> deleted = optimizer_.delete_job(*id);
    if (!deleted) return from_error(deleted.error());
    return json_answer(200, "null");
  }
  if (route == "/jobs/batch_size") {
    Result<std::string> id = query_job_id(request);
    if (!id) return from_error(id.error());
    Result<TrialId> trial = optimizer_.next_batch_size(*id);
    if (!trial) return from_error(trial.error());
    if (metrics_) metrics_->count_dispatch();
    return json_answer(200, trial_id_to_json(*trial));
  }
  if (route == "/jobs/{job_id}") {
    Result<std::string> id = decode_job_id(request.path.substr(6), "the job id in the path");
    if (!id) return from_error(id.error());
    Result<JobSnapshot> job = optimizer_.get_job(*id);
    if (!job) return from_error(job.error());
    Result<JobView> view = make_job_view(job->spec, std::move(job->trials));
    if (!view) return from_error(view.error());
    return json_answer(200, job_view_to_json(*view));
  }
  if (route == "/report") {
    Result<TrialReport> report = decode_report(request.body);
    if (!report) return from_error(report.error());
    Result<ReportDecision> decision = optimizer_.report(*report);
    if (!decision) return from_error(decision.error());
    if (metrics_) metrics_->count_report(decision->stop_train);
    return json_answer(200, report_decision_to_json(*decision));
  }
  // PATCH /trials
  Result<TrialId> trial = decode_trial_id(request.body);
  if (!trial) return from_error(trial.error());
  Result<Trial> ended = optimizer_.end_trial(*trial);
  if (!ended) return from_error(ended.error());
  return json_answer(200, "null");
}

}  // namespace zeus::server
