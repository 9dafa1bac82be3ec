// parse_http_url: an http:// or https:// URL of a server, read through http/uri.h (uriparser,
// RFC 3986), in the form every client of the project accepts: a host, an optional port (1-65535;
// else the scheme's 80 or 443), an optional path; no user, query or fragment.
// Thread-safety: a pure function. Failure: kInvalidArgument whose message is what is wrong with
// the URL ("has no host", ...), for the caller to put in its own sentence.
//
//   Result<HttpUrl> u = parse_http_url("http://[::1]:9091/");   // u->host == "::1", port 9091
#pragma once

#include <string>
#include <string_view>

#include "zeus/common/result.h"

namespace zeus::http {

struct HttpUrl {
  std::string scheme;         // "http" or "https"
  std::string host;           // without IPv6 brackets
  int port = 80;
  bool port_given = false;    // false: port is the scheme's default
  std::string host_and_port;  // as written, brackets kept ("[::1]:9091")
  std::string path;           // decoded; "" or starting with '/'
};

Result<HttpUrl> parse_http_url(std::string_view url);

// "http://host:port" of a server listening on `host` (an IPv6 address gets its brackets).
std::string server_url(const std::string& host, int port);

}  // namespace zeus::http
