// The address of a service (the batch-size service, the pipeline-frequency server), split the way
// the HTTP client needs it, the percent-encoding of query values and path segments, and the HTTP
// client of such an address.
//
// "http://host:8000/prefix/" -> scheme_host_port "http://host:8000", path_prefix "/prefix".
// Thread-safety: pure functions. Failure: kInvalidArgument naming the URL and the expected form.
//
//   Result<client::ServerUrl> url = client::parse_server_url("http://127.0.0.1:8000");
//   std::string target = url->path_prefix + "/jobs/" + client::percent_encode(job_id);
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "http/client.h"
#include "zeus/common/result.h"

namespace zeus::client {

struct ServerUrl {
  std::string text;              // as given, for messages
  std::string scheme_host_port;  // "http://host:port" (port kept as given, if any)
  std::string path_prefix;       // "" or "/something", no trailing slash
  std::string scheme;            // "http" or "https"
  std::string host;              // without IPv6 brackets
  int port = 80;                 // as given, else the scheme's (80, 443)
};

// Accepts http:// and https:// URLs with a host, an optional port (1-65535) and path.
Result<ServerUrl> parse_server_url(std::string_view url);

// An HTTP client of `url` whose requests time out after `timeout_s` (finite, > 0; else
// kInvalidArgument): plain for http://, TLS for https:// (the server's certificate verified
// against the system's CAs, plus the PEM file the environment variable ZEUS_CA_FILE names when
// set: a private CA, a test's self-signed certificate).
Result<std::unique_ptr<http::HttpClient>> open_http_client(const ServerUrl& url, double timeout_s,
                                                           bool keep_alive);

// Every byte except A-Z a-z 0-9 - . _ ~ as %XX.
std::string percent_encode(std::string_view value);

}  // namespace zeus::client
