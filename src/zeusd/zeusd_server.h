// ZeusdServer: zeusd's transport — a Unix socket (and optionally loopback TCP) served by the
// project's HTTP layer (http/server.h): no thread per connection; each request is answered by a
// handler (normally ZeusdService::handle) on the worker pool, together with the peer the kernel
// vouches for (SO_PEERCRED, or the socket table for TCP).
//
// The Unix socket is created with the configured owner, group and mode, in a directory whose
// whole path only root can write (unix_socket_setup.h; a stale socket file is replaced; a live
// zeusd on the same path is an error). Connections are persistent (HTTP/1.1
// keep-alive), so a client library keeps one connection for its whole run. Bounds: header and
// body limits (431/413); a started request must arrive within request_timeout_s (408); at most
// max_connections at once, where idle and slow connections give way to new ones and root or the
// socket's owner have a reserve on top, so no number of idle or slow peers locks them out; at
// most max_connections_per_user from one user (503 above). Nothing a peer sends can crash the
// server or grow its memory unbounded.
// Thread-safety: start/stop from one thread; the handler is called from many threads at once.
// Failure: start() answers Unavailable/PermissionDenied/InvalidArgument naming the socket and fix.
//
//   auto server = zeus::zeusd::ZeusdServer::start(options,
//       [&](const auto& request, const auto& peer) { return service.handle(request, peer); });
//   ... (*server)->stop();
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "http/server.h"
#include "zeus/common/result.h"
#include "zeusd/allow_list.h"
#include "zeusd/unix_socket_setup.h"

namespace zeus::zeusd {

using HttpRequest = http::HttpRequest;
using HttpResponse = http::HttpResponse;

struct ServerOptions {
  std::string socket_path = "/run/zeusd/zeusd.sock";  // empty: no Unix socket
  std::optional<uint32_t> socket_owner_uid;           // chown; unset: zeusd's user
  std::optional<uint32_t> socket_group_gid;           // chgrp; unset: zeusd's group
  uint32_t socket_mode = 0660;
  // The socket's directory must be writable by root only (unix_socket_setup.h); true: warn.
  bool allow_unsafe_socket_dir = false;
  std::string tcp_address;  // "127.0.0.1:PORT" (PORT 0: any free port), empty: no TCP
  // Any IPv4 address may be served (zeusd has a signing key: tokens identify callers). A peer
  // that is not a local socket is then served as uid nobody (65534), keyed by its address.
  bool tcp_any_address = false;
  http::Limits limits;
  size_t max_connections = 1024;
  size_t max_connections_per_user = 256;  // root and the socket's owner: no per-user limit
  double request_timeout_s = 10.0;
  double idle_timeout_s = 300.0;  // a kept-alive connection with no request
};

using RequestHandler = std::function<HttpResponse(const HttpRequest&, const Peer&)>;
// A request answered through its Reply (an event stream); false: not one of its requests, so the
// RequestHandler answers it.
using StreamHandler =
    std::function<bool(const HttpRequest&, const Peer&, const std::shared_ptr<http::Reply>&)>;

class ZeusdServer {
 public:
  // Binds the sockets and starts accepting.
  // `stream` (optional) sees each request first (both run on the worker pool).
  static Result<std::unique_ptr<ZeusdServer>> start(const ServerOptions& options,
                                                    RequestHandler handler,
                                                    StreamHandler stream = nullptr);
  ~ZeusdServer();  // stop()
  ZeusdServer(const ZeusdServer&) = delete;
  ZeusdServer& operator=(const ZeusdServer&) = delete;

  // Stops accepting, finishes requests in flight, closes every connection, removes the socket
  // file (only if it is still the one zeusd bound: a file put in its place stays).
  void stop();
  // The TCP port bound (useful with port 0); 0 without TCP.
  int tcp_port() const { return tcp_port_; }
  http::HttpServer::Stats stats() const { return http_->stats(); }

 private:
  explicit ZeusdServer(ServerOptions options) : options_(std::move(options)) {}

  ServerOptions options_;
  std::unique_ptr<http::HttpServer> http_;
  int tcp_port_ = 0;
  std::optional<BoundUnixSocket> socket_;  // the socket file bound, until removed
};

}  // namespace zeus::zeusd
