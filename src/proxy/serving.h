// How `zeus proxy` and its Colosseum serve: an HttpServer whose handler runs on the worker pool
// (it blocks while an upstream answers), listening on host:port.
// Failure: the server's start or listen error (a busy port, a bad address).
//
//   auto server = serve_on_workers(options, handle, "127.0.0.1", 0, &port);
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "http/server.h"
#include "zeus/result.h"

namespace zeus::proxy {

using ProxyHandler = std::function<void(const http::HttpRequest& request, http::Reply& reply)>;

// The server, listening; *bound_port is the port bound (port 0: any free one).
Result<std::unique_ptr<http::HttpServer>> serve_on_workers(http::ServerOptions options,
                                                           ProxyHandler handle,
                                                           const std::string& host, int port,
                                                           int* bound_port);

}  // namespace zeus::proxy
