#include "http/url.h"

#include <cctype>

#include "http/uri.h"

namespace zeus::http {

Result<HttpUrl> parse_http_url(std::string_view url) {
  auto why = [](const char* what) { return fail(ErrorCode::kInvalidArgument, what); };
  Result<UriParts> parsed = parse_uri(url);
  if (!parsed) {
    if (url.find("://") == std::string_view::npos) {
      return why("does not start with http:// or https://");
    }
    return fail(ErrorCode::kInvalidArgument, "is malformed (" + parsed.error().message + ")");
  }
  const UriParts& u = *parsed;
  if (u.scheme != "http" && u.scheme != "https") {
    return why("does not start with http:// or https://");
  }
  if (!u.has_authority || u.host.empty()) return why("has no host");
  if (u.has_userinfo) return why("has a user name (not supported)");
  if (u.has_query || u.has_fragment) return why("has a query or fragment");
  HttpUrl out;
  out.scheme = u.scheme;
  out.host = u.host;
  out.port = out.scheme == "https" ? 443 : 80;
  if (u.has_port) {
    int value = 0;
    for (char c : u.port) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return why("has a malformed port");
      value = value > 65535 ? value : value * 10 + (c - '0');
    }
    if (u.port.empty() || value < 1 || value > 65535) return why("has a port outside 1-65535");
    out.port = value;
    out.port_given = true;
  }
  out.path = u.path;
  out.host_and_port = u.host_and_port;
  return out;
}

std::string server_url(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace zeus::http
