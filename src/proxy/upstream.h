// The HTTP client to an upstream inference server, as `zeus proxy` and its Colosseum make it:
// an http:// or https:// URL (https: the certificate verified against the system's CAs and
// ZEUS_CA_FILE), answers of up to 64 MiB, `timeout_s` to the answer's head and between its pieces.
// Failure: kInvalidArgument naming `what` (e.g. "--upstream a=http://...") for a URL that is
// malformed or neither http:// nor https://. It keeps up to `max_idle_connections` connections for reuse
// (one per request that may be in flight: none is reopened).
//
//   auto client = upstream_client("http://127.0.0.1:8000", 600, "--upstream");
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "http/async_client.h"
#include "http/client.h"
#include "zeus/result.h"

namespace zeus::proxy {

Result<std::unique_ptr<http::HttpClient>> upstream_client(const std::string& url, double timeout_s,
                                                          const std::string& what,
                                                          size_t max_idle_connections = 16);
// The same upstream for a relay on an event loop (relay.h).
Result<std::shared_ptr<http::AsyncHttpClient>> async_upstream_client(
    const std::string& url, double timeout_s, const std::string& what,
    size_t max_idle_connections);

}  // namespace zeus::proxy
