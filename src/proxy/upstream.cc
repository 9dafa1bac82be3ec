#include "proxy/upstream.h"

#include <algorithm>

#include "http/url.h"

namespace zeus::proxy {
namespace {

struct UpstreamAt {
  http::HttpUrl url;
  http::ClientOptions options;
};

Result<UpstreamAt> read_upstream(const std::string& url, double timeout_s, const std::string& what,
                                 size_t max_idle_connections) {
  Result<http::HttpUrl> parsed = http::parse_http_url(url);
  if (!parsed) {
    return fail(ErrorCode::kInvalidArgument, what + " '" + url + "': " + parsed.error().message);
  }
  UpstreamAt at{std::move(*parsed), {}};
  at.options.timeout_s = timeout_s;
  at.options.max_body_bytes = 64 << 20;
  at.options.max_idle_connections = std::max<size_t>(1, max_idle_connections);
  return at;
}

}  // namespace

Result<std::unique_ptr<http::HttpClient>> upstream_client(const std::string& url, double timeout_s,
                                                          const std::string& what,
                                                          size_t max_idle_connections) {
  Result<UpstreamAt> at = read_upstream(url, timeout_s, what, max_idle_connections);
  if (!at) return fail(at.error());
  return http::HttpClient::for_scheme(at->url.scheme, at->url.host, at->url.port, at->options);
}

Result<std::shared_ptr<http::AsyncHttpClient>> async_upstream_client(
    const std::string& url, double timeout_s, const std::string& what,
    size_t max_idle_connections) {
  Result<UpstreamAt> at = read_upstream(url, timeout_s, what, max_idle_connections);
  if (!at) return fail(at.error());
  return http::AsyncHttpClient::for_scheme(at->url.scheme, at->url.host, at->url.port,
                                           at->options);
}

}  // namespace zeus::proxy
