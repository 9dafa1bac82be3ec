#include "client/online_answer.h"

namespace zeus::client {

Result<nlohmann::json> online_json_answer(http::HttpClient& client, const std::string& service,
                                          const std::string& base_url, const std::string& target,
                                          const http::Headers& headers,
                                          const std::string& key_variable) {
  auto answer = client.request("GET", target, {}, headers);
  if (!answer) {
    return fail(ErrorCode::kUnavailable,
                service + " at " + base_url + " cannot be reached: " + answer.error().message);
  }
  auto excerpt = [&] { return answer->body.substr(0, 300); };
  if (answer->status == 401 || answer->status == 403) {
    return fail(ErrorCode::kPermissionDenied,
                service + " refused the API key (HTTP " + std::to_string(answer->status) +
                    "): set " + key_variable + " to a valid key (" + excerpt() + ")");
  }
  if (answer->status == 404) {
    return fail(ErrorCode::kNotFound, service + " at " + base_url + " has no " + target +
                                          " (HTTP 404: " + excerpt() + ")");
  }
  if (answer->status < 200 || answer->status >= 300) {
    return fail(ErrorCode::kUnavailable, service + " at " + base_url + " answered HTTP " +
                                             std::to_string(answer->status) + ": " + excerpt());
  }
  nlohmann::json body = nlohmann::json::parse(answer->body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    return fail(ErrorCode::kInvalidArgument,
                service + " at " + base_url + " answered something that is not JSON: " + excerpt());
  }
  return body;
}

}  // namespace zeus::client
