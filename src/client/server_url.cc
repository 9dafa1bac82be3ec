// parse_server_url and percent_encode (client/server_url.h).
#include "client/server_url.h"

#include <boost/url/parse.hpp>
#include <cctype>

namespace zeus::client {
namespace {

tl::unexpected<Error> bad_url(std::string_view url, const std::string& why) {
  return fail(ErrorCode::kInvalidArgument, "server URL '" + std::string(url) + "' " + why +
                                               "; expected http://HOST:PORT, e.g. "
                                               "http://127.0.0.1:8000");
}

}  // namespace

// Read by Boost.URL (RFC 3986); then the subset a batch-size service URL may use.
Result<ServerUrl> parse_server_url(std::string_view url) {
  auto parsed = boost::urls::parse_absolute_uri(url);
  if (!parsed) {
    if (url.find("://") == std::string_view::npos) {
      return bad_url(url, "does not start with http:// or https://");
    }
    return bad_url(url, "is malformed (" + parsed.error().message() + ")");
  }
  const boost::urls::url_view& u = *parsed;
  if (u.scheme() != "http" && u.scheme() != "https") {
    return bad_url(url, "does not start with http:// or https://");
  }
  if (!u.has_authority() || u.host().empty()) return bad_url(url, "has no host");
  if (u.has_userinfo()) return bad_url(url, "has a user name (not supported)");
  if (u.has_query() || u.has_fragment()) return bad_url(url, "has a query or fragment");
  ServerUrl out;
  out.text = std::string(url);
  out.scheme = std::string(u.scheme());
  out.host = u.host_address();  // IPv6 without brackets
  out.port = out.scheme == "https" ? 443 : 80;
  if (u.has_port()) {
    const std::string_view port = u.port();
    int value = 0;
    for (char c : port) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return bad_url(url, "has a malformed port");
      value = value > 65535 ? value : value * 10 + (c - '0');
    }
    if (port.empty() || value < 1 || value > 65535) {
      return bad_url(url, "has a port outside 1-65535");
    }
    out.port = value;
  }
  std::string path = u.path();  // decoded
  if (!path.empty() && path.front() != '/') return bad_url(url, "has a malformed port");
  if (path.find(' ') != std::string::npos) return bad_url(url, "has a space in its path");
  while (!path.empty() && path.back() == '/') path.pop_back();
  out.scheme_host_port = out.scheme + "://" + std::string(u.encoded_host_and_port());
  out.path_prefix = path;
  return out;
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
