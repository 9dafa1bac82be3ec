// HTTP/1.1 messages as every server and client of the project sees them, independent of the
// library underneath (Boost.Beast): a request with its path and query decoded, a response, the
// limits a server enforces, and the one place bytes become a request (parse_request), which the
// servers use and the fuzz targets exercise.
//
// Parsing is Boost.Beast's (no HTTP parsing by hand here); targets are split and percent-decoded
// by uriparser (http/uri.h). The limits bound memory: a peer can never make a server hold more than
// max_header_bytes + max_body_bytes for one request.
// Thread-safety: plain values and stateless functions.
//
//   zeus::http::ParsedRequest p = zeus::http::parse_request(bytes, {});
//   if (p.complete) use(p.request); else if (p.error_status) answer(p.error_status, p.error);
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zeus::http {

// Header fields as (name, value) pairs, in order.
using Headers = std::vector<std::pair<std::string, std::string>>;

struct Limits {
  size_t max_header_bytes = 16 * 1024;  // request line plus headers
  size_t max_headers = 100;             // header fields
  size_t max_body_bytes = 64 * 1024;
  // The request bodies being received at once, all connections together (each counts its
  // Content-Length, or max_body_bytes when chunked, from its headers until it is handled): a new
  // body beyond it is answered 503 before any of it is read, so clients holding bodies open
  // cannot grow the server's memory without a total bound. 0: max(256 MiB, 4 x max_body_bytes).
  size_t max_total_body_bytes = 0;
};

struct HttpRequest {
  std::string method;  // "GET", "POST", ... as sent
  std::string target;  // as sent, e.g. "/jobs/batch_size?job_id=a%20b"
  std::string path;    // the target's path, percent-decoded
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in order
  int version = 11;                                        // 10 or 11
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  bool keep_alive = true;  // false after "Connection: close" or HTTP/1.0 without keep-alive

  // The first value of the header `lower_case_name`, or nullptr.
  const std::string* header(std::string_view lower_case_name) const;
  // The first value of the query parameter `name`, or nullptr.
  const std::string* query_value(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
  bool close = false;  // end the connection after this answer
  // HttpClient::stream: the body was read to its end (false: the callback stopped it, it was
  // quiet for idle_timeout_s, or the server closed before its end). Unused elsewhere.
  bool body_complete = true;

  // {"message": message} with `status` — the error shape of every server of the project.
  static HttpResponse error(int status, std::string_view message);
};

// The outcome of parsing bytes that should hold one request.
struct ParsedRequest {
  bool complete = false;   // a whole request was parsed into `request`
  size_t used_bytes = 0;   // complete: bytes of the input it took (pipelined requests follow)
  int error_status = 0;    // malformed or over a limit: 400, 413, 431, 501, 505
  std::string error;       // what is wrong, for the answer's {"message"}
  HttpRequest request;
};

// Parses one request from the start of `bytes` (neither complete nor an error: more bytes are
// needed). Chunked bodies are accepted within max_body_bytes.
ParsedRequest parse_request(std::string_view bytes, const Limits& limits);

// Splits `target` into the decoded path and query of *out; false (with *why) when the target is
// not an origin-form target ("/path?query").
bool decode_target(std::string_view target, HttpRequest* out, std::string* why);

// "OK", "Not Found", ...
std::string_view reason(int status);

// The field names that `headers`' Connection fields list (RFC 9110 §7.6.1: "Connection:
// keep-alive, X-Hop" makes X-Hop a field of this hop only), lower-cased; read by Beast's
// token_list.
std::vector<std::string> connection_options(const Headers& headers);

}  // namespace zeus::http
