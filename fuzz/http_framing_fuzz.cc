// libFuzzer target: the HTTP layer's framing decision (http/header_checks.h) on arbitrary bytes.
// A request that parse_request accepts (the servers' parser, limits and checks) must have an
// unambiguous length: no Transfer-Encoding other than exactly chunked, never next to
// Content-Length, none on HTTP/1.0, exactly one Host on HTTP/1.1 — or the process aborts. Bytes
// starting with "HTTP/" are read as an answer, as the client reads them, and checked the same
// way. Pipelined requests are followed (up to 4).
#include <boost/beast/http.hpp>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "http/header_checks.h"
#include "http/message.h"

namespace {

std::string lower_trimmed(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == ',')) s.pop_back();
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == ',')) s.erase(0, 1);
  return s;
}

void check_accepted(const zeus::http::HttpRequest& r) {
  if (r.version != 10 && r.version != 11) std::abort();
  int hosts = 0, te = 0, cl = 0;
  for (const auto& [name, value] : r.headers) {
    if (name == "host") ++hosts;
    if (name == "content-length") ++cl;
    if (name == "transfer-encoding") {
      ++te;
      if (lower_trimmed(value) != "chunked") std::abort();
    }
  }
  if (r.version == 11 && hosts != 1) std::abort();
  if (te > 0 && (cl > 0 || r.version == 10)) std::abort();
}

void check_answer(std::string_view bytes) {
  namespace bhttp = boost::beast::http;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.header_limit(4096);
  parser.body_limit(8192);
  boost::system::error_code ec;
  parser.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
  if (!parser.is_header_done()) return;
  if (!zeus::http::detail::check_response_header(parser.get())) {
    const auto& h = parser.get();
    if (h.count(bhttp::field::transfer_encoding) > 0 &&
        (h.version() != 11 || h.count(bhttp::field::content_length) > 0)) {
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  if (rest.substr(0, 5) == "HTTP/") {
    check_answer(rest);
    return 0;
  }
  zeus::http::Limits limits;
  limits.max_header_bytes = 4096;
  limits.max_body_bytes = 8192;
  for (int pipelined = 0; pipelined < 4 && !rest.empty(); ++pipelined) {
    zeus::http::ParsedRequest p = zeus::http::parse_request(rest, limits);
    if (!p.complete) {
      if (p.error_status != 0 && (p.error_status < 400 || p.error_status > 505)) std::abort();
      break;
    }
    check_accepted(p.request);
    if (p.used_bytes == 0 || p.used_bytes > rest.size()) std::abort();
    rest.remove_prefix(p.used_bytes);
  }
  return 0;
}
