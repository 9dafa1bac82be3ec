#include "proxy/upstream.h"

#include <algorithm>
#include <cctype>

#include "http/uri.h"
#include "zeus/common/redact_url.h"

namespace zeus::proxy {
namespace {

http::ClientOptions upstream_options(double timeout_s, size_t max_idle_connections) {
  http::ClientOptions options;
  options.timeout_s = timeout_s;
  options.max_body_bytes = 64 << 20;
  options.max_idle_connections = std::max<size_t>(1, max_idle_connections);
  return options;
}

}  // namespace

Result<UpstreamUrl> parse_upstream_url(const std::string& text, const std::string& what) {
  Result<http::HttpUrl> parsed = http::parse_http_url(text);
  if (!parsed) {
    return fail(ErrorCode::kInvalidArgument,
                what + " '" + redact_url(text) + "': " + parsed.error().message);
  }
  std::string path = parsed->path;
  while (!path.empty() && path.back() == '/') path.pop_back();
  const bool plain = std::all_of(path.begin(), path.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("/-._~!$&'()*+,;=:@").find(c) != std::string_view::npos;
  });
  if (!plain) {
    return fail(ErrorCode::kInvalidArgument,
                what + " '" + redact_url(text) + "': its path '" + parsed->path +
                    "' has characters a request target cannot carry as they are; write it "
                    "with letters, digits and - . _ ~ / only");
  }
  return UpstreamUrl{text, std::move(*parsed), std::move(path)};
}

Result<std::unique_ptr<http::HttpClient>> upstream_client(const UpstreamUrl& upstream,
                                                          double timeout_s,
                                                          size_t max_idle_connections) {
  return http::HttpClient::for_scheme(upstream.url.scheme, upstream.url.host, upstream.url.port,
                                      upstream_options(timeout_s, max_idle_connections));
}

Result<std::shared_ptr<http::AsyncHttpClient>> async_upstream_client(
    const UpstreamUrl& upstream, double timeout_s, size_t max_idle_connections) {
  return http::AsyncHttpClient::for_scheme(upstream.url.scheme, upstream.url.host,
                                           upstream.url.port,
                                           upstream_options(timeout_s, max_idle_connections));
}

Result<std::string> upstream_target(const std::string& path, std::string_view target) {
  if (target == "*") return std::string(target);
  Result<std::string> normalized = http::normalized_origin_form(target);
  if (!normalized) return fail(normalized.error());
  return path + *normalized;
}

}  // namespace zeus::proxy
