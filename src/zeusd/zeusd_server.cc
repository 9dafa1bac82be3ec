#include "zeusd/zeusd_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <nlohmann/json.hpp>

#include "zeus/log.h"
#include "zeusd/peer_credentials.h"
#include "zeusd/unix_socket_setup.h"

namespace zeus::zeusd {
namespace {

constexpr size_t kReadChunkBytes = 64 * 1024;
constexpr int kSendTimeoutS = 10;

std::string errno_text() { return std::strerror(errno); }

Result<int> bind_tcp_socket(const std::string& text, int* port_out) {
  const size_t colon = text.rfind(':');
  const std::string host = colon == std::string::npos ? "" : text.substr(0, colon);
  const std::string port_text = colon == std::string::npos ? "" : text.substr(colon + 1);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  if (host.empty() || port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string::npos ||
      inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1 || std::stoi(port_text) > 65535) {
    return fail(ErrorCode::kInvalidArgument, "--tcp '" + text + "' is not 127.0.0.1:PORT");
  }
  if ((ntohl(address.sin_addr.s_addr) >> 24) != 127) {
    return fail(ErrorCode::kInvalidArgument,
                "--tcp '" + text +
                    "' is not a loopback address: zeusd identifies TCP peers "
                    "through this machine's socket table, so it serves 127.x only");
  }
  address.sin_port = htons(static_cast<uint16_t>(std::stoi(port_text)));
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(ErrorCode::kUnavailable, "socket(AF_INET): " + errno_text());
  const int yes = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(fd, 64) != 0) {
    const std::string why = errno_text();
    close(fd);
    return fail(ErrorCode::kUnavailable, "cannot listen on " + text + ": " + why);
  }
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  *port_out = ntohs(address.sin_port);
  return fd;
}

bool send_all(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

HttpResponse transport_error(int status, const std::string& message) {
  HttpResponse response;
  response.status = status;
  response.body = nlohmann::json{{"message", message}}.dump();
  response.close = true;
  return response;
}

}  // namespace

ZeusdServer::ZeusdServer(ServerOptions options, RequestHandler handler)
    : options_(std::move(options)), handler_(std::move(handler)) {}

Result<std::unique_ptr<ZeusdServer>> ZeusdServer::start(const ServerOptions& options,
                                                        RequestHandler handler) {
  if (options.socket_path.empty() && options.tcp_address.empty()) {
    return fail(ErrorCode::kInvalidArgument, "zeusd needs a --socket path or a --tcp address");
  }
  std::unique_ptr<ZeusdServer> server(new ZeusdServer(options, std::move(handler)));
  server->stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (server->stop_fd_ < 0) return fail(ErrorCode::kInternal, "eventfd: " + errno_text());
  if (!options.socket_path.empty()) {
    auto fd = bind_unix_socket({options.socket_path, options.socket_owner_uid, options.socket_group_gid,
                                static_cast<mode_t>(options.socket_mode), options.allow_unsafe_socket_dir});
    if (!fd) return fail(fd.error());
    server->unix_fd_ = *fd;
  }
  if (!options.tcp_address.empty()) {
    auto fd = bind_tcp_socket(options.tcp_address, &server->tcp_port_);
    if (!fd) return fail(fd.error());
    server->tcp_fd_ = *fd;
  }
  ZeusdServer* raw = server.get();
  server->accept_thread_ = std::thread([raw] { raw->accept_loop(); });
  return server;
}

ZeusdServer::~ZeusdServer() {
  stop();
  if (stop_fd_ >= 0) close(stop_fd_);
}

void ZeusdServer::stop() {
  if (stopping_.exchange(true)) return;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t written = write(stop_fd_, &one, sizeof(one));
  if (accept_thread_.joinable()) accept_thread_.join();
  {
    std::lock_guard<std::mutex> lock(connections_mutex_);
    for (auto& connection : connections_) shutdown(connection.fd, SHUT_RDWR);
  }
  for (auto& connection : connections_) {
    if (connection.thread.joinable()) connection.thread.join();
    close(connection.fd);
  }
  connections_.clear();
  if (unix_fd_ >= 0) {
    close(unix_fd_);
    unlink(options_.socket_path.c_str());
    unix_fd_ = -1;
  }
  if (tcp_fd_ >= 0) {
    close(tcp_fd_);
    tcp_fd_ = -1;
  }
}

void ZeusdServer::reap_finished_connections() {
  std::lock_guard<std::mutex> lock(connections_mutex_);
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (it->done.load()) {
      it->thread.join();
      close(it->fd);
      it = connections_.erase(it);
    } else {
      ++it;
    }
  }
}

void ZeusdServer::accept_loop() {
  std::vector<pollfd> fds{{stop_fd_, POLLIN, 0}};
  if (unix_fd_ >= 0) fds.push_back({unix_fd_, POLLIN, 0});
  if (tcp_fd_ >= 0) fds.push_back({tcp_fd_, POLLIN, 0});
  while (!stopping_.load()) {
    for (auto& fd : fds) fd.revents = 0;
    // Wake at least once a second to join finished connection threads.
    if (poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) {
      log_error("zeusd: poll on the listening sockets failed: " + errno_text());
      return;
    }
    reap_finished_connections();
    if (fds[0].revents) return;
    for (size_t i = 1; i < fds.size(); ++i) {
      if (!(fds[i].revents & POLLIN)) continue;
      const int fd = accept4(fds[i].fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      const bool is_unix = fds[i].fd == unix_fd_;
      auto peer = is_unix ? unix_peer(fd) : tcp_peer(fd);
      if (!peer) {
        log_warning("zeusd: refused a connection: " + peer.error().message);
        send_all(fd, serialize_http_response(transport_error(403, peer.error().message)));
        close(fd);
        continue;
      }
      const timeval send_timeout{kSendTimeoutS, 0};
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout));
      std::lock_guard<std::mutex> lock(connections_mutex_);
      if (connections_.size() >= options_.max_connections) {
        send_all(fd, serialize_http_response(
                         transport_error(503, "zeusd has " + std::to_string(connections_.size()) +
                                                  " open connections, its limit; retry later")));
        close(fd);
        continue;
      }
      Connection& connection = connections_.emplace_back();
      connection.fd = fd;
      Connection* raw = &connection;
      connection.thread = std::thread([this, raw, peer = *peer] { serve(raw, peer); });
    }
  }
}

void ZeusdServer::serve(Connection* connection, const Peer& peer) {
  const int fd = connection->fd;
  std::string buffer;
  std::vector<char> chunk(kReadChunkBytes);
  using Clock = std::chrono::steady_clock;
  Clock::time_point request_started{};
  while (!stopping_.load()) {
    HttpRequest request;
    const ParseResult parsed = parse_http_request(buffer, options_.limits, &request);
    if (parsed.status == ParseStatus::kError) {
      send_all(fd,
               serialize_http_response(transport_error(parsed.error_status, parsed.error_message)));
      break;
    }
    if (parsed.status == ParseStatus::kComplete) {
      HttpResponse response = handler_(request, peer);
      response.close = response.close || !request.keep_alive || stopping_.load();
      if (!send_all(fd, serialize_http_response(response)) || response.close) break;
      buffer.erase(0, parsed.consumed_bytes);
      request_started = Clock::now();
      continue;
    }
    // Incomplete: wait for more bytes (an idle connection may wait forever; a started request
    // must finish within request_timeout_s).
    int timeout_ms = -1;
    if (!buffer.empty()) {
      const auto elapsed = std::chrono::duration<double>(Clock::now() - request_started).count();
      const double left_s = options_.request_timeout_s - elapsed;
      if (left_s <= 0) {
        send_all(fd, serialize_http_response(
                         transport_error(408, "the request did not arrive in time")));
        break;
      }
      timeout_ms = static_cast<int>(left_s * 1000) + 1;
    }
    pollfd fds[2] = {{fd, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    const int ready = poll(fds, 2, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0 || fds[1].revents) break;
    if (ready == 0) continue;  // the timeout check above answers 408
    const ssize_t n = recv(fd, chunk.data(), chunk.size(), 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;  // closed by the peer, or an error
    if (buffer.empty()) request_started = Clock::now();
    buffer.append(chunk.data(), static_cast<size_t>(n));
  }
  shutdown(fd, SHUT_RDWR);
  connection->done.store(true);
}

}  // namespace zeus::zeusd
