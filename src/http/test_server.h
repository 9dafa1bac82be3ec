// Test helper: an HttpServer on 127.0.0.1 (any free port) with an HttpClient pointed at it.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "http/client.h"
#include "http/server.h"

namespace zeus::http::testing {

struct Running {
  std::unique_ptr<HttpServer> server;
  int port = 0;
  std::unique_ptr<HttpClient> client;
};

inline Running start(ServerOptions options, Handler handler) {
  Running r;
  auto server = HttpServer::start(std::move(options), std::move(handler));
  EXPECT_TRUE(server.has_value()) << server.error().message;
  r.server = std::move(*server);
  auto port = r.server->listen_tcp("127.0.0.1", 0);
  EXPECT_TRUE(port.has_value()) << port.error().message;
  r.port = *port;
  ClientOptions client_options;
  client_options.timeout_s = 5;
  r.client = std::move(*HttpClient::tcp("127.0.0.1", r.port, client_options));
  return r;
}

}  // namespace zeus::http::testing
