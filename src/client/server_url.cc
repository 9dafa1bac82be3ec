// parse_server_url and percent_encode (client/server_url.h).
#include "client/server_url.h"

#include <cctype>

#include "http/url.h"
#include "zeus/common/redact_url.h"

namespace zeus::client {
namespace {

tl::unexpected<Error> bad_url(std::string_view url, const std::string& why) {
  return fail(ErrorCode::kInvalidArgument, "server URL '" + redact_url(std::string(url)) + "' " +
                                               why +
                                               "; expected http://HOST:PORT, e.g. "
                                               "http://127.0.0.1:8000");
}

}  // namespace

Result<ServerUrl> parse_server_url(std::string_view url) {
  Result<http::HttpUrl> u = http::parse_http_url(url);
  if (!u) return bad_url(url, u.error().message);
  if (u->path.find(' ') != std::string::npos) return bad_url(url, "has a space in its path");
  ServerUrl out;
  out.text = std::string(url);
  out.scheme = u->scheme;
  out.host = u->host;
  out.port = u->port;
  out.scheme_host_port = u->scheme + "://" + u->host_and_port;
  out.path_prefix = u->path;
  while (!out.path_prefix.empty() && out.path_prefix.back() == '/') out.path_prefix.pop_back();
  return out;
}

Result<std::unique_ptr<http::HttpClient>> open_http_client(const ServerUrl& url, double timeout_s,
                                                           bool keep_alive) {
  http::ClientOptions options;
  options.timeout_s = timeout_s;  // HttpClient::tcp refuses one that is not finite and > 0
  options.keep_alive = keep_alive;
  return http::HttpClient::for_scheme(url.scheme, url.host, url.port, options);
}

std::string percent_encode(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

}  // namespace zeus::client
