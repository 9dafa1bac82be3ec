// The HTTP client to an upstream inference server, as `zeus proxy` and its Colosseum make it:
// an http:// or https:// URL (https: the certificate verified against the system's CAs and
// ZEUS_CA_FILE), answers of up to 64 MiB, `timeout_s` to the answer's head and between its pieces.
// Failure: kInvalidArgument naming `what` (e.g. "--upstream a=http://...") for a URL that is
// malformed or neither http:// nor https://. It keeps up to `max_idle_connections` connections
// for reuse (one per request that may be in flight: none is reopened).
//
//   auto client = upstream_client("http://127.0.0.1:8000", 600, "--upstream");
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

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

// The path of an upstream's URL, put before every target sent to it (upstream_target): "" for
// "http://h:8000" and "http://h:8000/", "/llama" for "http://h:8000/llama/" (a server behind a
// gateway's path). Failure: kInvalidArgument naming `what` for a malformed URL, or a path with
// characters a target cannot carry as they are (spaces, %-escapes, ...).
Result<std::string> upstream_path(const std::string& url, const std::string& what);

// A client's `target` as sent to an upstream whose path is `path`: "/v1/models?x=1" ->
// "/llama/v1/models?x=1". Only a normalised origin-form goes (http/uri.h,
// normalized_origin_form): dot segments are removed before the path is put in front, so no
// target leaves it ("/../admin" -> "/llama/admin"), and an absolute-form target's authority is
// dropped (the upstream's Host is the proxy's). OPTIONS "*" goes as it is. Failure:
// kInvalidArgument (the proxy answers 400) for a target the upstream could read as another path.
Result<std::string> upstream_target(const std::string& path, std::string_view target);

}  // namespace zeus::proxy
