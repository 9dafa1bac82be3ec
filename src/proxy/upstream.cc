#include "proxy/upstream.h"

#include <algorithm>

#include "http/url.h"

namespace zeus::proxy {

Result<std::unique_ptr<http::HttpClient>> upstream_client(const std::string& url, double timeout_s,
                                                          const std::string& what,
                                                          size_t max_idle_connections) {
  Result<http::HttpUrl> parsed = http::parse_http_url(url);
  if (!parsed) {
    return fail(ErrorCode::kInvalidArgument, what + " '" + url + "': " + parsed.error().message);
  }
  http::ClientOptions options;
  options.timeout_s = timeout_s;
  options.max_body_bytes = 64 << 20;
  options.max_idle_connections = std::max<size_t>(1, max_idle_connections);
  return http::HttpClient::for_scheme(parsed->scheme, parsed->host, parsed->port, options);
}

}  // namespace zeus::proxy
