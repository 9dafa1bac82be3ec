#include "http/url.h"

#include <boost/url/parse.hpp>
#include <cctype>

namespace zeus::http {

Result<HttpUrl> parse_http_url(std::string_view url) {
  auto why = [](const char* what) { return fail(ErrorCode::kInvalidArgument, what); };
  auto parsed = boost::urls::parse_absolute_uri(url);
  if (!parsed) {
    if (url.find("://") == std::string_view::npos) {
      return why("does not start with http:// or https://");
    }
    return fail(ErrorCode::kInvalidArgument, "is malformed (" + parsed.error().message() + ")");
  }
  const boost::urls::url_view& u = *parsed;
  if (u.scheme() != "http" && u.scheme() != "https") {
    return why("does not start with http:// or https://");
  }
  if (!u.has_authority() || u.host().empty()) return why("has no host");
  if (u.has_userinfo()) return why("has a user name (not supported)");
  if (u.has_query() || u.has_fragment()) return why("has a query or fragment");
  HttpUrl out;
  out.scheme = std::string(u.scheme());
  out.host = u.host_address();
  out.port = out.scheme == "https" ? 443 : 80;
  if (u.has_port()) {
    const std::string_view port = u.port();
    int value = 0;
    for (char c : port) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return why("has a malformed port");
      value = value > 65535 ? value : value * 10 + (c - '0');
    }
    if (port.empty() || value < 1 || value > 65535) return why("has a port outside 1-65535");
    out.port = value;
    out.port_given = true;
  }
  out.path = u.path();
  // Boost.URL 1.81 reads "http://h:80x" as port 80 and path "x"; a path must start with '/'.
  if (!out.path.empty() && out.path.front() != '/') return why("has a malformed port");
  out.host_and_port = std::string(u.encoded_host_and_port());
  return out;
}

std::string server_url(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace zeus::http
