// ZeusdClient: HTTP/1.1 to zeusd (its Unix socket, or TCP with a bearer token) with the project's
// HTTP client (kept-alive connections, opened per process).
#include "zeus/zeusd_client/zeusd_client.h"

#include <unistd.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "http/client.h"
#include "http/url.h"

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
    case 401:
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

ErrorCode code_from_name(const std::string& name, ErrorCode otherwise) {
  if (name == "leased") return ErrorCode::kUnavailable;
  for (ErrorCode code :
       {ErrorCode::kNotSupported, ErrorCode::kPermissionDenied, ErrorCode::kNotFound,
        ErrorCode::kInvalidArgument, ErrorCode::kUnavailable, ErrorCode::kInternal}) {
    if (error_code_name(code) == name) return code;
  }
  return otherwise;
}

// zeusd's error answer as an Error: our routes' {"message"}, upstream's {"error"}, or upstream's
// per-device {"errors": {"<i>": message}} (with our {"codes"} beside it when zeusd is ours).
Error error_of(int status, const std::string& body) {
  ErrorCode code = code_for_status(status);
  std::string message = body.substr(0, 200);
  auto parsed = nlohmann::json::parse(body, nullptr, false);
  if (!parsed.is_discarded() && parsed.is_object()) {
    if (parsed.value("message", nlohmann::json()).is_string()) {
      message = parsed["message"].get<std::string>();
    } else if (parsed.value("error", nlohmann::json()).is_string()) {
      message = parsed["error"].get<std::string>();
    } else if (parsed.value("errors", nlohmann::json()).is_object()) {
      message.clear();
      const nlohmann::json codes = parsed.value("codes", nlohmann::json::object());
      for (const auto& [id, text] : parsed["errors"].items()) {
        if (!message.empty()) message += "; ";
        message += text.is_string() ? text.get<std::string>() : text.dump();
        if (codes.is_object() && codes.value(id, nlohmann::json()).is_string())
          code = code_from_name(codes[id].get<std::string>(), code);
      }
    }
  }
  return Error{code, "zeusd: " + message + " (HTTP " + std::to_string(status) + ")"};
}

}  // namespace

Result<ZeusdEndpoint> ZeusdEndpoint::tcp(std::string_view host_port, std::string token) {
  auto url = http::parse_http_url("http://" + std::string(host_port));
  if (!url || !url->port_given || !url->path.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                std::string(kZeusdHostPortEnvironment) + "='" + std::string(host_port) +
                    "' must be HOST:PORT, e.g. 127.0.0.1:4938" +
                    (url ? std::string() : " (" + url.error().message + ")"));
  }
  ZeusdEndpoint endpoint;
  endpoint.host = url->host;
  endpoint.port = url->port;
  endpoint.token = std::move(token);
  return endpoint;
}

Result<std::optional<ZeusdEndpoint>> ZeusdEndpoint::from_environment() {
  // The token goes with requests on the socket too (zeusd with a signing key wants it there).
  const char* token_variable = std::getenv(kZeusdTokenEnvironment);
  const std::string token = token_variable != nullptr ? token_variable : "";
  const char* socket = std::getenv(kZeusdSocketEnvironment);
  if (socket != nullptr && *socket != '\0') {
    ZeusdEndpoint endpoint;
    endpoint.socket_path = socket;
    endpoint.token = token;
    return std::optional<ZeusdEndpoint>(std::move(endpoint));
  }
  const char* host_port = std::getenv(kZeusdHostPortEnvironment);
  if (host_port == nullptr || *host_port == '\0') return std::optional<ZeusdEndpoint>();
  auto endpoint = tcp(host_port, token);
  if (!endpoint) return fail(endpoint.error());
  return std::optional<ZeusdEndpoint>(std::move(*endpoint));
}

std::string ZeusdEndpoint::describe() const {
  if (!is_tcp()) return "socket " + socket_path;
  return "tcp " + http::server_url(host, port).substr(7);
}

ZeusdClient::ZeusdClient(std::string socket_path) {
  endpoint_.socket_path = std::move(socket_path);
}

ZeusdClient::ZeusdClient(ZeusdEndpoint endpoint) : endpoint_(std::move(endpoint)) {}

ZeusdClient::~ZeusdClient() { close_lease_session(); }

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
      options.retry_on_stale_connection = true;   // zeusd's requests are idempotent
      Result<std::unique_ptr<http::HttpClient>> made =
          endpoint_.is_tcp() ? http::HttpClient::tcp(endpoint_.host, endpoint_.port, options)
                             : http::HttpClient::unix_socket(endpoint_.socket_path, options);
      if (!made) {
        return fail(made.error().code,
                    "zeusd " + endpoint_.describe() + ": " + made.error().message);
      }
      http_ = std::move(*made);
      http_owner_pid_ = getpid();
    }
    client = http_.get();
  }
  http::Headers headers;
  if (!endpoint_.token.empty()) headers.emplace_back("Authorization", "Bearer " + endpoint_.token);
  if (std::string session = lease_session(); !session.empty())
    headers.emplace_back("X-Zeusd-Lease-Session", std::move(session));
  Result<http::HttpResponse> answer = client->request(method, target, json_body, headers);
  if (!answer) {
    const std::string& why = answer.error().message;
    const std::string prefix = endpoint_.is_tcp()
                                   ? "cannot reach zeusd at " + endpoint_.describe().substr(4) +
                                         " (" + kZeusdHostPortEnvironment + "): " + why
                                   : "cannot reach zeusd at " + endpoint_.socket_path + " (" +
                                         kZeusdSocketEnvironment + "): " + why;
    if (!endpoint_.is_tcp() && why.find("ermission denied") != std::string::npos) {
      return fail(ErrorCode::kPermissionDenied,
                  prefix +
                      "; ask the operator to add you to the socket's group "
                      "(zeusd serve --socket-gid GROUP)");
    }
    return fail(ErrorCode::kUnavailable, prefix + "; is zeusd running? (systemctl start zeusd)");
  }
  if (answer->status >= 200 && answer->status < 300) return std::move(answer->body);
  if (answer->status == 401 && endpoint_.token.empty()) {
    return fail(ErrorCode::kPermissionDenied, error_of(answer->status, answer->body).message +
                                                  "; set " + kZeusdTokenEnvironment +
                                                  " to a token from `zeusd token issue`");
  }
  return fail(error_of(answer->status, answer->body));
}

}  // namespace zeus
