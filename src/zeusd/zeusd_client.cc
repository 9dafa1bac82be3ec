// ZeusdClient: HTTP/1.1 over zeusd's Unix socket with the project's HTTP client (kept-alive
// connections, opened per process).
#include "zeus/zeusd_client.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "http/client.h"

namespace zeus {
namespace {

constexpr double kResponseTimeoutS = 30;

ErrorCode code_for_status(int status) {
  switch (status) {
    case 400:
    case 405:
    case 413:
    case 431:
      return ErrorCode::kInvalidArgument;
    case 403:
      return ErrorCode::kPermissionDenied;
    case 404:
      return ErrorCode::kNotFound;
    case 409:
    case 503:
      return ErrorCode::kUnavailable;
    case 501:
      return ErrorCode::kNotSupported;
    default:
      return ErrorCode::kInternal;
  }
}

std::string message_of(const std::string& body) {
  auto parsed = nlohmann::json::parse(body, nullptr, false);
  if (!parsed.is_discarded() && parsed.is_object() && parsed.contains("message") &&
      parsed["message"].is_string()) {
    return parsed["message"].get<std::string>();
  }
  return body.substr(0, 200);
}

}  // namespace

ZeusdClient::ZeusdClient(std::string socket_path) : socket_path_(std::move(socket_path)) {}

ZeusdClient::~ZeusdClient() = default;

Result<std::string> ZeusdClient::request(std::string_view method, std::string_view target,
                                         std::string_view json_body) {
  http::HttpClient* client = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Leases belong to the process that connects: a forked child opens its own connections
    // (the parent's stay with the parent).
    if (!http_ || http_owner_pid_ != getpid()) {
      if (http_ && http_owner_pid_ != getpid()) (void)http_.release();  // the parent's, not ours
      http::ClientOptions options;
      options.timeout_s = kResponseTimeoutS;
      options.max_body_bytes = 16 * 1024 * 1024;  // /discover of a large machine
      options.retry_on_stale_connection = true;    // zeusd's requests are idempotent
      Result<std::unique_ptr<http::HttpClient>> made =
          http::HttpClient::unix_socket(socket_path_, options);
      if (!made) {
        return fail(made.error().code,
                    "zeusd socket path '" + socket_path_ + "': " + made.error().message);
      }
      http_ = std::move(*made);
      http_owner_pid_ = getpid();
    }
    client = http_.get();
  }
  Result<http::HttpResponse> answer = client->request(method, target, json_body);
  if (!answer) {
    const std::string& why = answer.error().message;
    const std::string prefix =
        "cannot reach zeusd at " + socket_path_ + " (" + kZeusdSocketEnvironment + "): " + why;
    if (why.find("ermission denied") != std::string::npos) {
      return fail(ErrorCode::kPermissionDenied,
                  prefix + "; ask the operator to add you to the socket's group "
                           "(zeusd --socket-group)");
    }
    return fail(ErrorCode::kUnavailable, prefix + "; is zeusd running? (systemctl start zeusd)");
  }
  if (answer->status >= 200 && answer->status < 300) return std::move(answer->body);
  return fail(code_for_status(answer->status), "zeusd: " + message_of(answer->body) + " (HTTP " +
                                                   std::to_string(answer->status) + ")");
}

}  // namespace zeus
