// HTTP/1.1 messages as zeusd speaks them: a bounded parser for requests (server side) and
// responses (client side), and their serialisation.
//
// The parsers are pure functions over a byte buffer: they answer "incomplete" until a whole
// message is in the buffer, then how many bytes it used (so pipelined requests work), or an error
// with the HTTP status to answer (400 malformed, 413 body too large, 431 header too large, 501
// Transfer-Encoding, 505 not HTTP/1.x). Bodies need Content-Length; chunked encoding is refused.
// Limits bound memory: a peer can never make zeusd buffer more than max_header_bytes +
// max_body_bytes. This parser is what fuzz/zeusd_request_fuzz.cc exercises.
// Thread-safety: stateless functions.
//
//   zeus::zeusd::HttpRequest request;
//   auto parsed = zeus::zeusd::parse_http_request(buffer, {}, &request);
//   if (parsed.status == zeus::zeusd::ParseStatus::kComplete) buffer.erase(0,
//   parsed.consumed_bytes);
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zeus::zeusd {

struct HttpLimits {
  size_t max_header_bytes = 16 * 1024;  // request/status line plus headers
  size_t max_body_bytes = 64 * 1024;
  size_t max_headers = 100;
};

struct HttpRequest {
  std::string method;     // "GET", "POST", ...
  std::string target;     // as sent, e.g. "/gpu/0/power_limit?x=1"
  std::string path;       // target before '?'
  std::string query;      // target after '?', may be empty
  int version_minor = 1;  // HTTP/1.<version_minor>
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, values trimmed
  std::string body;
  bool keep_alive = true;  // false for "Connection: close" or HTTP/1.0 without keep-alive

  // The first value of header `lower_case_name`, or nullptr.
  const std::string* header(std::string_view lower_case_name) const;
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  bool close = false;  // send "Connection: close" and end the connection after it
};

enum class ParseStatus { kIncomplete, kComplete, kError };

struct ParseResult {
  ParseStatus status = ParseStatus::kIncomplete;
  size_t consumed_bytes = 0;  // kComplete: bytes of `data` this message used
  int error_status = 0;       // kError: the HTTP status to answer (400, 413, 431, 501, 505)
  std::string error_message;  // kError: what is wrong, for the answer's body
};

// Parses one request from the start of `data` into *out (overwritten).
ParseResult parse_http_request(std::string_view data, const HttpLimits& limits, HttpRequest* out);

// A response as the client sees it.
struct ParsedResponse {
  int status = 0;
  std::string body;
  bool keep_alive = true;
};

// Parses one response from the start of `data` (Content-Length required unless 204/304).
ParseResult parse_http_response(std::string_view data, const HttpLimits& limits,
                                ParsedResponse* out);

// "HTTP/1.1 <status> <reason>" with Content-Type, Content-Length and Connection headers.
std::string serialize_http_response(const HttpResponse& response);

// A request with Host, Content-Length and (with a body) Content-Type: application/json.
std::string serialize_http_request(std::string_view method, std::string_view target,
                                   std::string_view body);

// "OK", "Not Found", ...; "Unknown" for codes zeusd never sends.
std::string_view http_reason(int status);

}  // namespace zeus::zeusd
