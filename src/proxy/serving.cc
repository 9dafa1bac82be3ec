#include "proxy/serving.h"

namespace zeus::proxy {

Result<void> Serving::start(http::ServerOptions options, ProxyHandler handle,
                            const std::string& host, int port) {
  return start_on_loop(
      std::move(options),
      http::HttpServer::on_workers(
          [handle = std::move(handle)](const http::HttpRequest& request, const http::Peer& peer,
                                       std::shared_ptr<http::Reply> reply) {
            handle(request, peer, *reply);
          }),
      host, port);
}

Result<void> Serving::start_on_loop(http::ServerOptions options, http::Handler handler,
                                    const std::string& host, int port) {
  auto server = http::HttpServer::start(std::move(options), std::move(handler));
  if (!server) return fail(server.error());
  Result<int> bound = (*server)->listen_tcp(host, port);
  if (!bound) return fail(bound.error());
  server_ = std::move(*server);
  port_ = *bound;
  return ok();
}

}  // namespace zeus::proxy
