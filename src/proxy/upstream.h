// An upstream inference server of `zeus proxy`, its Colosseum and `zeus proxy calibrate`: its URL
// read once, where the command line gives it (parse_upstream_url), then the HTTP clients made
// from it: an http:// or https:// URL (https: the certificate verified against the system's CAs
// and ZEUS_CA_FILE), answers of up to 64 MiB, `timeout_s` to the answer's head and between its
// pieces, up to `max_idle_connections` connections kept for reuse (one per request that may be in
// flight: none is reopened).
//
//   auto upstream = parse_upstream_url("http://127.0.0.1:8000/llama/", "--upstream");
//   auto client = upstream_client(*upstream, 600);   // upstream->path == "/llama"
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "http/async_client.h"
#include "http/client.h"
#include "http/url.h"
#include "zeus/common/result.h"

namespace zeus::proxy {

// An upstream's URL, read and checked once. `path` goes before every target sent to it
// (upstream_target): "" for "http://h:8000" and "http://h:8000/", "/llama" for
// "http://h:8000/llama/" (a server behind a gateway's path).
struct UpstreamUrl {
  std::string text;  // as given (for messages: pass it through redact_url)
  http::HttpUrl url;
  std::string path;
};

// Failure: kInvalidArgument naming `what` (e.g. "--upstream a=...") for a URL that is malformed,
// neither http:// nor https://, or whose path has characters a target cannot carry as they are
// (spaces, %-escapes, ...).
Result<UpstreamUrl> parse_upstream_url(const std::string& text, const std::string& what);

// Failure: only what the HTTP layer refuses in the options (none for a parsed URL).
Result<std::unique_ptr<http::HttpClient>> upstream_client(const UpstreamUrl& upstream,
                                                          double timeout_s,
                                                          size_t max_idle_connections = 16);
// The same upstream for a relay on an event loop (relay.h).
Result<std::shared_ptr<http::AsyncHttpClient>> async_upstream_client(
    const UpstreamUrl& upstream, double timeout_s, size_t max_idle_connections);

// A client's `target` as sent to an upstream whose path is `path`: "/v1/models?x=1" ->
// "/llama/v1/models?x=1". Only a normalised origin-form goes (http/uri.h,
// normalized_origin_form): dot segments are removed before the path is put in front, so no
// target leaves it ("/../admin" -> "/llama/admin"), and an absolute-form target's authority is
// dropped (the upstream's Host is the proxy's). OPTIONS "*" goes as it is. Failure:
// kInvalidArgument (the proxy answers 400) for a target the upstream could read as another path.
Result<std::string> upstream_target(const std::string& path, std::string_view target);

}  // namespace zeus::proxy
