// How `zeus proxy` and its Colosseum serve: an HttpServer whose handler runs on the worker pool
// (the Colosseum's prompts block while an upstream answers; options.inline_request may answer
// the others on the event loop) or on the event loop (the proxy's relay, which never blocks), listening on host:port, and what they answer for it (the port bound,
// stop()).
// Failure: start() returns the server's start or listen error (a busy port, a bad address).
// Thread-safety: start() once, before port() and stop(); stop() from any thread.
//
//   Serving serving;
//   ZEUS_TRY(serving.start(options, handle, "127.0.0.1", 0));
//   int port = serving.port();
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "http/server.h"
#include "zeus/common/result.h"

namespace zeus::proxy {

using ProxyHandler = std::function<void(const http::HttpRequest& request,
                                         const http::Peer& peer, http::Reply& reply)>;

class Serving {
 public:
  // Starts the server and listens (port 0: any free one).
  Result<void> start(http::ServerOptions options, ProxyHandler handle, const std::string& host,
                     int port);
  // The same with a handler called on the I/O thread, which must not block.
  Result<void> start_on_loop(http::ServerOptions options, http::Handler handler,
                             const std::string& host, int port);
  int port() const { return port_; }  // the port bound
  void stop() {
    if (server_) server_->stop();
  }

 private:
  std::unique_ptr<http::HttpServer> server_;
  int port_ = 0;
};

}  // namespace zeus::proxy
