// parse_server_url and percent_encode (client/server_url.h).
#include "client/server_url.h"

#include <cctype>

namespace zeus::client {
namespace {

tl::unexpected<Error> bad_url(std::string_view url, const std::string& why) {
  return fail(ErrorCode::kInvalidArgument, "server URL '" + std::string(url) + "' " + why +
                                               "; expected http://HOST:PORT, e.g. "
                                               "http://127.0.0.1:8000");
}

}  // namespace

Result<ServerUrl> parse_server_url(std::string_view url) {
  ServerUrl out;
  out.text = std::string(url);
  std::string_view rest = url;
  std::string scheme;
  if (rest.substr(0, 7) == "http://") {
    scheme = "http";
    rest.remove_prefix(7);
  } else if (rest.substr(0, 8) == "https://") {
    scheme = "https";
    rest.remove_prefix(8);
  } else {
    return bad_url(url, "does not start with http:// or https://");
  }
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  if (authority.empty()) return bad_url(url, "has no host");
  for (char c : authority) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == '?' || c == '#' || c == '@') {
      return bad_url(url, "has a malformed host");
    }
  }
  // The port: digits after the last ':' that is not inside an IPv6 [..] literal.
  const size_t colon = authority.rfind(':');
  const size_t bracket = authority.rfind(']');
  out.port = scheme == "https" ? 443 : 80;
  out.host = std::string(authority);
  if (colon != std::string_view::npos && (bracket == std::string_view::npos || colon > bracket)) {
    out.host = std::string(authority.substr(0, colon));
    std::string_view port = authority.substr(colon + 1);
    if (colon == 0) return bad_url(url, "has no host");
    if (port.empty() || port.size() > 5) return bad_url(url, "has a malformed port");
    int value = 0;
    for (char c : port) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return bad_url(url, "has a malformed port");
      value = value * 10 + (c - '0');
    }
    if (value < 1 || value > 65535) return bad_url(url, "has a port outside 1-65535");
    out.port = value;
  }
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  if (path.find_first_of("?# ") != std::string_view::npos) {
    return bad_url(url, "has a query, fragment or space in its path");
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  out.scheme = scheme;
  out.scheme_host_port = scheme + "://" + std::string(authority);
  out.path_prefix = std::string(path);
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
