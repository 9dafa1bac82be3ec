#include "proxy/upstream.h"

#include <algorithm>
#include <cctype>

#include "http/uri.h"
#include "http/url.h"
#include "zeus/redact_url.h"

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
    return fail(ErrorCode::kInvalidArgument,
                what + " '" + redact_url(url) + "': " + parsed.error().message);
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

Result<std::string> upstream_path(const std::string& url, const std::string& what) {
  Result<http::HttpUrl> parsed = http::parse_http_url(url);
  if (!parsed) {
    return fail(ErrorCode::kInvalidArgument,
                what + " '" + redact_url(url) + "': " + parsed.error().message);
  }
  std::string path = parsed->path;
  while (!path.empty() && path.back() == '/') path.pop_back();
  const bool plain = std::all_of(path.begin(), path.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("/-._~!$&'()*+,;=:@").find(c) != std::string_view::npos;
  });
  if (!plain) {
    return fail(ErrorCode::kInvalidArgument,
                what + " '" + redact_url(url) + "': its path '" + parsed->path +
                    "' has characters a request target cannot carry as they are; write it "
                    "with letters, digits and - . _ ~ / only");
  }
  return path;
}

Result<std::string> upstream_target(const std::string& path, std::string_view target) {
  if (target == "*") return std::string(target);
  Result<std::string> normalized = http::normalized_origin_form(target);
  if (!normalized) return fail(normalized.error());
  return path + *normalized;
}

}  // namespace zeus::proxy
