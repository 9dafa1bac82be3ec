// ZeusdClient: HTTP/1.1 over zeusd's Unix socket, one persistent connection per process.
#include "zeus/zeusd_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <nlohmann/json.hpp>

#include "zeusd/http_message.h"

namespace zeus {
namespace {

constexpr int kResponseTimeoutMs = 30000;
constexpr size_t kReadChunkBytes = 16 * 1024;

zeusd::HttpLimits client_limits() {
  zeusd::HttpLimits limits;
  limits.max_body_bytes = 16 * 1024 * 1024;  // /discover of a large machine
  return limits;
}

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

ZeusdClient::~ZeusdClient() {
  if (fd_ >= 0) close(fd_);
}

Result<void> ZeusdClient::connect_locked() {
  if (fd_ >= 0) close(fd_);  // after fork() this closes only the child's copy
  fd_ = -1;
  pending_.clear();
  sockaddr_un address{};
  if (socket_path_.size() >= sizeof(address.sun_path)) {
    return fail(ErrorCode::kInvalidArgument,
                "zeusd socket path '" + socket_path_ + "' is too long");
  }
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, socket_path_.c_str(), socket_path_.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return fail(ErrorCode::kUnavailable, std::string("socket(AF_UNIX): ") + std::strerror(errno));
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    const int error = errno;
    close(fd);
    const std::string prefix = "cannot reach zeusd at " + socket_path_ + " (" +
                               kZeusdSocketEnvironment + "): " + std::strerror(error);
    if (error == EACCES) {
      return fail(
          ErrorCode::kPermissionDenied,
          prefix + "; ask the operator to add you to the socket's group (zeusd --socket-group)");
    }
    return fail(ErrorCode::kUnavailable, prefix + "; is zeusd running? (systemctl start zeusd)");
  }
  fd_ = fd;
  fd_owner_pid_ = getpid();
  return ok();
}

Result<std::string> ZeusdClient::exchange_locked(const std::string& wire, bool* may_retry) {
  *may_retry = false;
  // Any transport failure below leaves the connection unusable: drop it.
  struct DropOnFailure {
    ZeusdClient* client;
    bool armed = true;
    ~DropOnFailure() {
      if (armed && client->fd_ >= 0) {
        close(client->fd_);
        client->fd_ = -1;
        client->pending_.clear();
      }
    }
  } drop{this};
  size_t sent = 0;
  while (sent < wire.size()) {
    const ssize_t n = send(fd_, wire.data() + sent, wire.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *may_retry = sent == 0;
      return fail(ErrorCode::kUnavailable,
                  "the connection to zeusd at " + socket_path_ + " broke: " + std::strerror(errno));
    }
    sent += static_cast<size_t>(n);
  }
  std::vector<char> chunk(kReadChunkBytes);
  const zeusd::HttpLimits limits = client_limits();
  bool received_any = !pending_.empty();
  while (true) {
    zeusd::ParsedResponse response;
    const zeusd::ParseResult parsed = zeusd::parse_http_response(pending_, limits, &response);
    if (parsed.status == zeusd::ParseStatus::kError) {
      return fail(ErrorCode::kInternal, "zeusd sent a malformed answer: " + parsed.error_message);
    }
    if (parsed.status == zeusd::ParseStatus::kComplete) {
      drop.armed = false;
      pending_.erase(0, parsed.consumed_bytes);
      if (!response.keep_alive) {
        close(fd_);
        fd_ = -1;
        pending_.clear();
      }
      if (response.status >= 200 && response.status < 300) return std::move(response.body);
      return fail(code_for_status(response.status), "zeusd: " + message_of(response.body) +
                                                        " (HTTP " +
                                                        std::to_string(response.status) + ")");
    }
    pollfd fds{fd_, POLLIN, 0};
    const int ready = poll(&fds, 1, kResponseTimeoutMs);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0)
      return fail(ErrorCode::kUnavailable,
                  "zeusd at " + socket_path_ + " did not answer within 30 s");
    const ssize_t n = ready < 0 ? -1 : recv(fd_, chunk.data(), chunk.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *may_retry = !received_any;  // closed before answering: an old keep-alive connection
      return fail(ErrorCode::kUnavailable, "zeusd at " + socket_path_ + " closed the connection");
    }
    received_any = true;
    pending_.append(chunk.data(), static_cast<size_t>(n));
  }
}

Result<std::string> ZeusdClient::request(std::string_view method, std::string_view target,
                                         std::string_view json_body) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string wire = zeusd::serialize_http_request(method, target, json_body);
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool reused = fd_ >= 0 && fd_owner_pid_ == getpid();
    if (!reused) {
      auto connected = connect_locked();
      if (!connected) return fail(connected.error());
    }
    bool may_retry = false;
    auto answer = exchange_locked(wire, &may_retry);
    if (answer || !may_retry || !reused) return answer;
  }
  return fail(ErrorCode::kUnavailable,
              "zeusd at " + socket_path_ + " keeps closing the connection");
}

}  // namespace zeus
