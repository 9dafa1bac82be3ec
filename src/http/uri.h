// Reading and writing URIs (RFC 3986) for the HTTP layer, through Debian's uriparser: the one
// place the project splits a URL or a request target, or percent-encodes a path segment.
// (Boost.URL would do the same but only exists from Boost 1.81; Debian 12's default Boost is
// 1.74, which Python's scipy and sklearn packages need.)
//
//   Result<UriParts> u = parse_uri("http://[::1]:9091/a%20b?x=1");
//   // u->host == "::1", u->port == "9091", u->path == "/a b", u->query == {{"x", "1"}}
//
// Decoding: path, host and query keys and values are percent-decoded (bytes kept as they are,
// a path's NUL included); in a query a '+' is a space (as Python's parse_qsl and the upstream
// servers read it), in a path it stays a '+'. A missing '=' gives an empty value. Query pairs with
// neither key nor value ("a&&b", "/?") are dropped. A query holding %00 is refused (uriparser
// hands parameters over as C strings, which would cut the value at the NUL).
// Thread-safety: pure functions. Failure: kInvalidArgument whose message names the first
// character that breaks the syntax, for the caller to put in its own sentence.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zeus/common/result.h"

namespace zeus::http {

struct UriParts {
  std::string scheme;          // as written ("" when the reference has none)
  bool has_authority = false;  // "//" present (its host may be empty)
  bool has_userinfo = false;
  std::string host;            // decoded, without an IPv6 literal's brackets
  bool has_port = false;       // a ':' after the host, even with no digits
  std::string port;            // the digits as written
  std::string host_and_port;   // as written, brackets kept ("[::1]:9091")
  std::string path;            // decoded; "" or starting with '/' when there is an authority
  bool has_query = false;
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in order
  bool has_fragment = false;
};

// Any URI reference: an absolute URI ("http://h/p"), a network path ("//h"), a path.
Result<UriParts> parse_uri(std::string_view text);

// An origin-form request target (RFC 9112 §3.2.1): an absolute path and an optional query, no
// fragment. "//a/b" is the path "//a/b" here, never a host.
Result<UriParts> parse_origin_form(std::string_view target);

// What a proxy forwards for a request target: the origin-form ("/path?query", still
// percent-encoded) of a target in origin-form or in absolute-form (http:// or https://, whose
// authority is dropped: the next hop's Host is the proxy's to choose), normalised as RFC 3986
// §6.2.2 says: percent-encoded unreserved characters decoded, hex digits upper-case, dot
// segments removed (§5.2.4: "/a/../b" -> "/b"; ".." at the root stays at the root, so the result
// never climbs above "/"). The query is kept as written. Failure: kInvalidArgument naming the
// reason when the target is neither form, or when the next hop could read its path as another
// one: an encoded '/' or '\' (%2F, %5C), a NUL (%00, in the query too), a '\', or a segment
// that some servers take for a dot segment (".;x", "..;x": path parameters are stripped by some).
//   normalized_origin_form("/v1/../../admin/%7e?a=..")   // "/admin/~?a=.."
//   normalized_origin_form("http://other.host/v1/models")  // "/v1/models"
Result<std::string> normalized_origin_form(std::string_view target);

// True when `text` is an authority without user information: host[:port], the host possibly
// empty, an IP literal in brackets, the port digits or none (a Host header's value).
bool is_host_and_port(std::string_view text);

// `text` with every byte but RFC 3986's unreserved ones (ALPHA DIGIT - . _ ~) as %XX: safe as
// one path segment or one query value.
std::string percent_encode(std::string_view text);

}  // namespace zeus::http
