// libFuzzer target: the target `zeus proxy` sends to an upstream behind a path (proxy/upstream.h,
// upstream_target over http/uri.h's normalized_origin_form). For any bytes as a client's request
// target: no crash or leak; a target that is forwarded starts with the upstream's path and a '/',
// is an origin-form that parses, and no segment of its decoded path is "." or ".." (nothing can
// climb out of the path at the next server); an encoded slash, backslash or NUL never goes;
// forwarding is idempotent (the forwarded path, normalised again, is itself).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "http/uri.h"
#include "proxy/upstream.h"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

constexpr std::string_view kPath = "/gw";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view target(reinterpret_cast<const char*>(data), size);
  auto sent = zeus::proxy::upstream_target(std::string(kPath), target);
  if (!sent || target == "*") return 0;
  require(sent->rfind(std::string(kPath) + "/", 0) == 0);
  const std::string rest = sent->substr(kPath.size());
  const std::string path_part = rest.substr(0, rest.find('?'));
  for (const char* bad : {"%2F", "%2f", "%5C", "%5c", "%00", "\\"}) {
    require(path_part.find(bad) == std::string::npos);
  }
  auto parts = zeus::http::parse_origin_form(*sent);
  require(parts.has_value());
  const std::string& decoded = parts->path;
  size_t start = 1;
  while (start <= decoded.size()) {
    const size_t slash = std::min(decoded.find('/', start), decoded.size());
    const std::string_view segment(decoded.data() + start, slash - start);
    require(segment != "." && segment != "..");
    start = slash + 1;
  }
  auto again = zeus::http::normalized_origin_form(rest);
  require(again.has_value() && *again == rest);
  return 0;
}
