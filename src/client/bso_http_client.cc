// make_bso_http_client(): the batch-size service over HTTP with the project's HTTP client
// (zeus/client/bso_http_client.h, http/client.h).
#include "zeus/client/bso_http_client.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "client/server_url.h"
#include "http/client.h"
#include "zeus/wire/bso_json.h"

namespace zeus {
namespace {

// Maps a non-2xx answer to an error carrying the server's {"message"}.
tl::unexpected<Error> http_error(int status, const std::string& body, const std::string& doing) {
  std::string message;
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) {
    message = j["message"].get<std::string>();
  } else {
    message = body.substr(0, 200);
  }
  ErrorCode code = ErrorCode::kInternal;
  if (status == 400 || status == 409 || status == 413 || status == 405) {
    code = ErrorCode::kInvalidArgument;
  } else if (status == 401 || status == 403) {
    code = ErrorCode::kPermissionDenied;  // the server's message says whether a token was missing
                                          // or wrong; the caller names how to give it
  } else if (status == 404) {
    code = ErrorCode::kNotFound;
  } else if (status == 503) {
    code = ErrorCode::kUnavailable;
  }
  // A 409 keeps the optimizer's "job conflict: " prefix, so is_job_conflict() works remotely.
  if (status == 409 && message.rfind("job conflict: ", 0) != 0) message = "job conflict: " + message;
  if (status == 409) return fail(code, message);
  return fail(code, doing + ": HTTP " + std::to_string(status) + ": " + message);
}

class HttpClient final : public BsoHttpClient {
 public:
  HttpClient(client::ServerUrl url, BsoHttpClientOptions options,
             std::unique_ptr<http::HttpClient> http)
      : url_(std::move(url)), options_(std::move(options)), http_(std::move(http)) {
    if (!options_.token.empty()) headers_.emplace_back("Authorization", "Bearer " + options_.token);
  }

  Result<JobSpec> register_job(const JobSpec& spec) override {
    Result<std::string> body = send("POST", "/jobs", job_spec_to_json(spec), "registering job");
    if (!body) return fail(body.error());
    return answer(job_spec_from_json(*body));
  }

  Result<TrialId> next_batch_size(std::string_view job_id) override {
    Result<std::string> body =
        send("GET", "/jobs/batch_size?job_id=" + client::percent_encode(job_id), "",
             "asking for a batch size");
    if (!body) return fail(body.error());
    return answer(trial_id_from_json(*body));
  }

  Result<ReportDecision> report(const TrialReport& report) override {
    Result<std::string> body =
        send("POST", "/report", trial_report_to_json(report), "reporting progress");
    if (!body) return fail(body.error());
    return answer(report_decision_from_json(*body));
  }

  Result<void> end_trial(const TrialId& trial) override {
    Result<std::string> body = send("PATCH", "/trials", trial_id_to_json(trial), "ending trial");
    if (!body) return fail(body.error());
    return ok();
  }

  Result<void> delete_job(std::string_view job_id) override {
    Result<std::string> body =
        send("DELETE", "/jobs?job_id=" + client::percent_encode(job_id), "", "deleting job");
    if (!body) return fail(body.error());
    return ok();
  }

  Result<std::string> get_job_json(std::string_view job_id) override {
    return send("GET", "/jobs/" + client::percent_encode(job_id), "", "reading job");
  }

  Result<void> health() override {
    Result<std::string> body = send("GET", "/healthz", "", "checking health");
    if (!body) return fail(body.error());
    return ok();
  }

 private:
  // An answer the server sent with 2xx but that does not decode is the server's fault.
  template <typename T>
  Result<T> answer(Result<T> decoded) {
    if (decoded) return decoded;
    return fail(ErrorCode::kInternal, "the batch-size service at " + url_.text +
                                          " sent an unreadable answer: " +
                                          decoded.error().message);
  }

  Result<std::string> send(const std::string& method, const std::string& target,
                           const std::string& body, const std::string& doing) {
    Result<http::HttpResponse> res =
        http_->request(method, url_.path_prefix + target, body, headers_);
    if (!res) {
      return fail(ErrorCode::kUnavailable, doing + ": " + res.error().message +
                                               "; is `zeus serve` running at " + url_.text + "?");
    }
    if (res->status < 200 || res->status >= 300) return http_error(res->status, res->body, doing);
    return std::move(res->body);
  }

  client::ServerUrl url_;
  BsoHttpClientOptions options_;
  std::unique_ptr<http::HttpClient> http_;  // thread-safe: its own pool of connections
  http::Headers headers_;
};

}  // namespace

Result<std::unique_ptr<BsoHttpClient>> make_bso_http_client(const std::string& server_url,
                                                            BsoHttpClientOptions options) {
  Result<client::ServerUrl> url = client::parse_server_url(server_url);
  if (!url) return fail(url.error());
  if (options.token.find_first_of("\r\n") != std::string::npos) {
    return fail(ErrorCode::kInvalidArgument, "the token holds a line break; check the token file");
  }
  Result<std::unique_ptr<http::HttpClient>> http =
      client::open_http_client(*url, options.timeout_s, options.keep_alive);
  if (!http) return fail(http.error());
  return std::unique_ptr<BsoHttpClient>(
      std::make_unique<HttpClient>(*url, std::move(options), std::move(*http)));
}

Result<std::unique_ptr<BatchSizeService>> make_http_batch_size_service(
    const std::string& server_url, BsoHttpClientOptions options) {
  Result<std::unique_ptr<BsoHttpClient>> c = make_bso_http_client(server_url, std::move(options));
  if (!c) return fail(c.error());
  return std::unique_ptr<BatchSizeService>(std::move(*c));
}

}  // namespace zeus
