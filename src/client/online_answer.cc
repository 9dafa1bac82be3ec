#include "client/online_answer.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "http/uri.h"

namespace zeus::client {

Result<nlohmann::json> online_json_answer(http::HttpClient& client, const std::string& service,
                                          const std::string& base_url, const std::string& target,
                                          const http::Headers& headers,
                                          const std::string& key_variable) {
  auto answer = client.request("GET", target, {}, headers);
  if (!answer) {
    return fail(ErrorCode::kUnavailable,
                service + " at " + base_url + " cannot be reached: " + answer.error().message +
                    "; check the network and the URL, or allow a slow service more time "
                    "(timeout_s)");
  }
  // What the request carried that must never be shown: every header's value (auth-token) and
  // every query value (api_key=...), wherever a server echoes them in its answer.
  std::vector<std::string> secrets;
  for (const auto& [name, value] : headers) secrets.push_back(value);
  if (Result<http::UriParts> parts = http::parse_origin_form(target)) {
    for (const auto& [key, value] : parts->query) {
      secrets.push_back(value);
      secrets.push_back(http::percent_encode(value));  // as sent, should a server echo that
    }
  }
  auto excerpt = [&] {
    std::string text = answer->body;
    for (const std::string& secret : secrets) {
      if (secret.size() < 4) continue;  // too short to be a key; would blank ordinary words
      for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 3)) {
        text.replace(at, secret.size(), "***");
      }
    }
    return text.substr(0, 300);
  };
  if (answer->status == 401 || answer->status == 403) {
    return fail(ErrorCode::kPermissionDenied,
                service + " refused the API key (HTTP " + std::to_string(answer->status) +
                    "): set " + key_variable + " to a valid key (" + excerpt() + ")");
  }
  if (answer->status == 404) {
    // The path only: the query may hold the API key (OpenEI's api_key=).
    return fail(ErrorCode::kNotFound, service + " at " + base_url + " has no " +
                                          target.substr(0, target.find('?')) +
                                          " (HTTP 404: " + excerpt() + "; check the URL)");
  }
  if (answer->status < 200 || answer->status >= 300) {
    return fail(ErrorCode::kUnavailable, service + " at " + base_url + " answered HTTP " +
                                             std::to_string(answer->status) + ": " + excerpt() +
                                             " (try again later)");
  }
  nlohmann::json body = nlohmann::json::parse(answer->body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    return fail(ErrorCode::kInvalidArgument,
                service + " at " + base_url + " answered something that is not JSON: " + excerpt() +
                    " (check that the URL is " + service +
                    "'s API, not a proxy's or a login page)");
  }
  return body;
}

}  // namespace zeus::client
