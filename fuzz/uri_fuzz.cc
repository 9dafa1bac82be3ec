// libFuzzer target: the URI reading of the HTTP layer (http/uri.h, uriparser underneath). For any
// bytes: no crash or leak; an origin-form target that parses has a path starting with '/' and no
// host; a percent-encoded string reads back as itself (NUL bytes included) as one path segment;
// a server URL that parse_http_url accepts has a host and a port in 1-65535.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "http/uri.h"
#include "http/url.h"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)zeus::http::parse_uri(text);
  (void)zeus::http::is_host_and_port(text);
  if (auto target = zeus::http::parse_origin_form(text)) {
    require(!target->path.empty() && target->path.front() == '/');
    require(!target->has_authority && target->host.empty() && !target->has_fragment);
  }
  const std::string encoded = zeus::http::percent_encode(text);
  require(encoded.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                    "0123456789-._~%") == std::string::npos);
  auto back = zeus::http::parse_origin_form("/" + encoded);
  require(back.has_value() && back->path == "/" + std::string(text));
  if (auto url = zeus::http::parse_http_url(text)) {
    require(!url->host.empty() && url->port >= 1 && url->port <= 65535);
    require(url->path.empty() || url->path.front() == '/');
  }
  return 0;
}
