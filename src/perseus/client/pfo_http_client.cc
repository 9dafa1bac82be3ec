// make_pfo_http_client(): the pipeline-frequency server over HTTP
// (zeus/perseus/pfo_http_client.h), with
// the project's HTTP client and the server's own wire codec (perseus/wire/wire.h).
#include "zeus/perseus/pfo_http_client.h"

#include <nlohmann/json.hpp>

#include "client/server_url.h"
#include "http/client.h"
#include "perseus/wire/wire.h"

namespace zeus {
namespace {

// The server's {"detail"}: a string, or FastAPI's list of {"loc", "msg"} ("body.rank: msg").
std::string detail_text(const std::string& body) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("detail")) return body.substr(0, 200);
  const nlohmann::json& detail = j["detail"];
  if (detail.is_string()) return detail.get<std::string>();
  std::string text;
  if (detail.is_array()) {
    for (const nlohmann::json& item : detail) {
      if (!item.is_object()) continue;
      std::string loc;
      for (const nlohmann::json& part : item.value("loc", nlohmann::json::array())) {
        loc +=
            (loc.empty() ? "" : ".") + (part.is_string() ? part.get<std::string>() : part.dump());
      }
      const nlohmann::json msg = item.value("msg", nlohmann::json(""));
      text += (text.empty() ? "" : "; ") + loc + ": " +
              (msg.is_string() ? msg.get<std::string>() : msg.dump());
    }
  }
  return text.empty() ? detail.dump() : text;
}

ErrorCode code_of(int status) {
  switch (status) {
    case 400:
    case 409:
    case 422:
      return ErrorCode::kInvalidArgument;
    case 404:
    case 410:
      return ErrorCode::kNotFound;
    case 503:
    case 504:
      return ErrorCode::kUnavailable;
    default:
      return ErrorCode::kInternal;
  }
}

class PfoHttpClient final : public PipelineFrequencyService {
 public:
  PfoHttpClient(client::ServerUrl url, std::unique_ptr<http::HttpClient> http,
                std::unique_ptr<http::HttpClient> barrier)
      : url_(std::move(url)), http_(std::move(http)), barrier_(std::move(barrier)) {}

  Result<std::string> register_job(const pfo::JobInfo& job) override {
    Result<std::string> body =
        send(*http_, "POST", "/register_job", pfo::encode(job), "registering the job");
    if (!body) return fail(body.error());
    const nlohmann::json id = nlohmann::json::parse(*body, nullptr, /*allow_exceptions=*/false);
    if (!id.is_string() || id.get<std::string>().empty()) {
      return unreadable("registering the job", "a job id (a JSON string)", *body);
    }
    return id.get<std::string>();
  }

  Result<void> register_rank(const std::string& job_id, const pfo::RankInfo& rank) override {
    Result<std::string> body =
        send(*http_, "POST", "/register_rank/" + client::percent_encode(job_id), pfo::encode(rank),
             "registering rank " + std::to_string(rank.rank));
    if (!body) return fail(body.error());
    return ok();
  }

  Result<pfo::FrequencySchedule> schedule(const std::string& job_id, int rank) override {
    const std::string doing = "waiting for rank " + std::to_string(rank) + "'s schedule";
    Result<std::string> body = send(
        *barrier_, "GET",
        "/schedule/" + client::percent_encode(job_id) + "?rank=" + std::to_string(rank), "", doing);
    if (!body) return fail(body.error());
    pfo::Decoded<pfo::FrequencySchedule> schedule = pfo::decode_frequency_schedule(*body);
    if (!schedule) return unreadable(doing, "a FrequencySchedule", schedule.error().msg);
    return std::move(*schedule);
  }

  Result<void> report(const std::string& job_id, const pfo::ProfilingResult& result) override {
    Result<std::string> body =
        send(*http_, "POST", "/result/" + client::percent_encode(job_id), pfo::encode(result),
             "reporting rank " + std::to_string(result.rank) + "'s results");
    if (!body) return fail(body.error());
    return ok();
  }

  std::string where() const override { return url_.text; }

 private:
  tl::unexpected<Error> unreadable(const std::string& doing, const std::string& expected,
                                   const std::string& got) const {
    return fail(ErrorCode::kInternal, doing + ": the server at " + url_.text + " did not answer " +
                                          expected + ": " + got.substr(0, 200));
  }

  Result<std::string> send(http::HttpClient& http, const std::string& method,
                           const std::string& target, const std::string& body,
                           const std::string& doing) {
    Result<http::HttpResponse> res = http.request(method, url_.path_prefix + target, body);
    if (!res) {
      return fail(ErrorCode::kUnavailable, doing + ": " + res.error().message +
                                               "; is `zeus pfo serve` running at " + url_.text +
                                               "?");
    }
    if (res->status < 200 || res->status >= 300) {
      return fail(code_of(res->status), doing + ": HTTP " + std::to_string(res->status) + " from " +
                                            url_.text + ": " + detail_text(res->body));
    }
    return std::move(res->body);
  }

  client::ServerUrl url_;
  std::unique_ptr<http::HttpClient> http_;     // the short requests
  std::unique_ptr<http::HttpClient> barrier_;  // GET /schedule, with its long timeout
};

}  // namespace

Result<std::unique_ptr<PipelineFrequencyService>> make_pfo_http_client(
    const std::string& server_url, PfoHttpClientOptions options) {
  Result<client::ServerUrl> url = client::parse_server_url(server_url);
  if (!url) return fail(url.error());
  Result<std::unique_ptr<http::HttpClient>> http =
      client::open_http_client(*url, options.timeout_s, /*keep_alive=*/true);
  if (!http) return fail(http.error());
  Result<std::unique_ptr<http::HttpClient>> barrier =
      client::open_http_client(*url, options.schedule_timeout_s, /*keep_alive=*/true);
  if (!barrier) return fail(barrier.error());
  return std::unique_ptr<PipelineFrequencyService>(
      std::make_unique<PfoHttpClient>(std::move(*url), std::move(*http), std::move(*barrier)));
}

}  // namespace zeus
