// One request relayed by `zeus proxy` to its upstream and back, measured on the way, entirely on
// the proxy's event loop: the upstream exchange is asynchronous (http/async_client.h), a streamed
// answer is written to the client as its pieces arrive (BodyStream::write_nowait), and when the
// client falls behind, the relay stops reading from the upstream until it has caught up (bounded
// buffering, no thread waiting). No worker thread and no hand-off between threads per request.
//
// What the relay does with the answer (proxy.h): bodies byte-identical; X-Zeus-Energy-J and
// X-Zeus-Tokens as headers (whole answers) or trailers (streams); with "X-Zeus-Energy: 1" or
// "?zeus=1", usage.energy_j in a JSON answer and ": zeus-energy-j=<J> tokens=<n>" before
// "data: [DONE]". An upstream that does not answer: 502 with its error; an answer cut short
// upstream: a whole answer becomes 502, a stream is cut downstream (never looks complete).
// The meter's end of a request (one reading of the GPUs' energy counters) runs on the loop.
// Thread-safety: call start_relay from the server's I/O thread (the handler); the relay keeps
// what it needs.
#pragma once

#include <memory>
#include <string>

#include "http/async_client.h"
#include "http/server.h"
#include "proxy/meter.h"
#include "proxy/proxy_metrics.h"

namespace zeus::proxy {

struct RelayContext {
  std::shared_ptr<http::AsyncHttpClient> upstream;
  Meter* meter = nullptr;             // outlives every relay (the server stops first)
  ProxyMetrics* metrics = nullptr;
  double upstream_timeout_s = 600;    // to the answer's head, and between two of its pieces
  std::string upstream_path;          // before every target (upstream.h: UpstreamUrl::path)
};

void start_relay(const RelayContext& context, const http::HttpRequest& request,
                 std::shared_ptr<http::Reply> reply);

}  // namespace zeus::proxy
