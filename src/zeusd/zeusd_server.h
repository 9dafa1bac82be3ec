// ZeusdServer: zeusd's transport — a Unix socket (and optionally loopback TCP) served with one
// thread per connection, each request parsed by http_message.h and answered by a handler
// (normally ZeusdService::handle) together with the peer the kernel vouches for.
//
// The Unix socket is created with the configured owner, group and mode (a stale socket file is
// replaced; a live zeusd on the same path is an error). Connections are persistent (HTTP/1.1
// keep-alive), so a client library keeps one connection for its whole run. Bounds: at most
// max_connections at once (more get 503), a started request must arrive within
// request_timeout_s (408), header and body limits (431/413); a malformed request gets its 4xx and
// the connection is closed. Nothing a peer sends can crash the server or grow its memory unbounded.
// Thread-safety: start/stop from one thread; the handler is called from many threads at once.
// Failure: start() answers Unavailable/PermissionDenied/InvalidArgument naming the socket and fix.
//
//   auto server = zeus::zeusd::ZeusdServer::start(options,
//       [&](const auto& request, const auto& peer) { return service.handle(request, peer); });
//   ... (*server)->stop();
#pragma once

#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "zeus/result.h"
#include "zeusd/allow_list.h"
#include "zeusd/http_message.h"

namespace zeus::zeusd {

struct ServerOptions {
  std::string socket_path = "/run/zeusd/zeusd.sock";  // empty: no Unix socket
  std::optional<uint32_t> socket_owner_uid;           // chown; unset: zeusd's user
  std::optional<uint32_t> socket_group_gid;           // chgrp; unset: zeusd's group
  uint32_t socket_mode = 0660;
  // The socket's directory must be writable by root only (unix_socket_setup.h); true: warn.
  bool allow_unsafe_socket_dir = false;
  std::string tcp_address;  // "127.0.0.1:PORT" (PORT 0: any free port), empty: no TCP
  HttpLimits limits;
  size_t max_connections = 128;
  double request_timeout_s = 10.0;
};

using RequestHandler = std::function<HttpResponse(const HttpRequest&, const Peer&)>;

class ZeusdServer {
 public:
  // Binds the sockets and starts accepting.
  static Result<std::unique_ptr<ZeusdServer>> start(const ServerOptions& options,
                                                    RequestHandler handler);
  ~ZeusdServer();  // stop()
  ZeusdServer(const ZeusdServer&) = delete;
  ZeusdServer& operator=(const ZeusdServer&) = delete;

  // Stops accepting, closes every connection, joins every thread, removes the socket file.
  void stop();
  // The TCP port bound (useful with port 0); 0 without TCP.
  int tcp_port() const { return tcp_port_; }

 private:
  struct Connection {
    std::thread thread;
    int fd = -1;
    std::atomic<bool> done{false};
  };
  ZeusdServer(ServerOptions options, RequestHandler handler);
  void accept_loop();
  void serve(Connection* connection, const Peer& peer);
  void reap_finished_connections();

  ServerOptions options_;
  RequestHandler handler_;
  int unix_fd_ = -1;
  int tcp_fd_ = -1;
  int tcp_port_ = 0;
  int stop_fd_ = -1;  // eventfd, readable once stop() begins
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  std::mutex connections_mutex_;
  std::list<Connection> connections_;  // guarded by connections_mutex_
};

}  // namespace zeus::zeusd
