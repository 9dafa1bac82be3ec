#include "http/message.h"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/rfc7230.hpp>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "http/beast_mapping.h"
#include "http/header_checks.h"
#include "http/uri.h"

namespace zeus::http {

const std::string* HttpRequest::header(std::string_view lower_case_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_case_name) return &value;
  }
  return nullptr;
}

const std::string* HttpRequest::query_value(std::string_view name) const {
  for (const auto& [key, value] : query) {
    if (key == name) return &value;
  }
  return nullptr;
}

HttpResponse HttpResponse::error(int status, std::string_view message) {
  HttpResponse r;
  r.status = status;
  r.body = nlohmann::json{{"message", message}}.dump(-1, ' ', false,
                                                      nlohmann::json::error_handler_t::replace);
  return r;
}

namespace {

void fill_from(UriParts&& url, HttpRequest* out) {
  out->path = std::move(url.path);  // decoded
  if (out->path.empty()) out->path = "/";  // "http://host" names the root
  out->query = std::move(url.query);  // decoded, '+' read as a space (as upstream's servers)
}

}  // namespace

bool decode_target(std::string_view target, HttpRequest* out, std::string* why) {
  if (target == "*") {  // asterisk-form (OPTIONS only: from_beast checks the method)
    out->path = "*";
    out->query.clear();
    return true;
  }
  if (!target.empty() && target.front() == '/') {  // origin-form
    Result<UriParts> parsed = parse_origin_form(target);
    if (!parsed) {
      *why = "the request target is not a path (\"/path?query\"): " + parsed.error().message;
      return false;
    }
    fill_from(std::move(*parsed), out);
    return true;
  }
  // absolute-form (RFC 9112 §3.2.2: servers must accept it): its path and query are the target.
  Result<UriParts> absolute = parse_uri(target);
  if (absolute && absolute->has_authority && !absolute->has_fragment &&
      (boost::beast::iequals(absolute->scheme, "http") ||
       boost::beast::iequals(absolute->scheme, "https"))) {
    fill_from(std::move(*absolute), out);
    return true;
  }
  *why = "the request target is neither a path (\"/path?query\") nor an http:// URL";
  return false;
}

std::vector<std::string> connection_options(const Headers& headers) {
  std::vector<std::string> names;
  for (const auto& [name, value] : headers) {
    if (!boost::beast::iequals(name, "connection")) continue;
    for (const auto token : detail::bhttp::token_list(value)) {
      std::string lower(token);
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      names.push_back(std::move(lower));
    }
  }
  return names;
}

std::string_view reason(int status) {
  const std::string_view r = detail::bhttp::obsolete_reason(static_cast<detail::bhttp::status>(status));
  return r.empty() || r == "<unknown-status>" ? std::string_view("Unknown") : r;
}

ParsedRequest parse_request(std::string_view bytes, const Limits& limits) {
  ParsedRequest out;
  detail::bhttp::request_parser<detail::bhttp::string_body> parser;
  detail::apply_limits(limits, &parser);
  parser.eager(true);
  boost::system::error_code ec;
  size_t used = 0;
  bool header_checked = false;
  while (used < bytes.size() && !parser.is_done()) {
    const size_t n = parser.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
    if (ec == detail::bhttp::error::need_more) break;
    if (ec) {
      std::tie(out.error_status, out.error) = detail::status_of_parse_error(ec, bytes, limits);
      return out;
    }
    used += n;
    if (parser.is_header_done() && !header_checked) {  // before any of the body counts
      header_checked = true;
      if (auto problem = detail::check_request_header(parser.get())) {
        out.error_status = problem->status;
        out.error = std::move(problem->why);
        return out;
      }
    }
    if (n == 0) break;
  }
  if (!parser.is_done()) return out;  // incomplete
  if (!detail::from_beast(parser.release(), limits, &out.request, &out.error_status, &out.error)) {
    return out;
  }
  out.complete = true;
  out.used_bytes = used;
  return out;
}

namespace detail {

void apply_limits(const Limits& limits, bhttp::request_parser<bhttp::string_body>* parser) {
  parser->header_limit(static_cast<std::uint32_t>(
      std::min<size_t>(limits.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
  parser->body_limit(limits.max_body_bytes);
}

namespace {

// True when the request line at the start of `received` ends in " HTTP/d.d" and CRLF: Beast's
// bad_version then means a version it does not serve, not a malformed line.
bool request_line_is_well_formed(std::string_view received) {
  while (!received.empty() && (received.front() == '\r' || received.front() == '\n')) {
    received.remove_prefix(1);
  }
  const size_t end = received.find('\n');
  if (end == std::string_view::npos || end < 10 || received[end - 1] != '\r') return false;
  const std::string_view tail = received.substr(end - 10, 9);  // " HTTP/d.d"
  return tail.substr(0, 6) == " HTTP/" && std::isdigit(static_cast<unsigned char>(tail[6])) &&
         tail[7] == '.' && std::isdigit(static_cast<unsigned char>(tail[8]));
}

}  // namespace

std::pair<int, std::string> status_of_parse_error(const boost::system::error_code& ec,
                                                  std::string_view received, const Limits& limits) {
  if (ec == bhttp::error::header_limit) {
    return {431, "request header larger than the server's limit"};
  }
  if (ec == bhttp::error::body_limit || ec == bhttp::error::buffer_overflow) {
    return {413, "request body larger than the server's limit of " +
                     std::to_string(limits.max_body_bytes) + " bytes"};
  }
  if (ec == bhttp::error::bad_version) {
    // Beast says bad_version both for "HTTP/1.2" CRLF and for a line ending in a bare LF.
    if (request_line_is_well_formed(received)) return {505, "only HTTP/1.0 and HTTP/1.1 are served"};
    return {400, "malformed HTTP request line: it must end in ' HTTP/1.1' and CRLF"};
  }
  if (ec == bhttp::error::bad_line_ending) {
    return {400, "malformed HTTP request: every line must end in CRLF (\\r\\n)"};
  }
  if (ec == bhttp::error::bad_transfer_encoding) {
    // Beast reports this for Transfer-Encoding next to Content-Length, or chunked twice: framing
    // that two parsers may read differently (request smuggling), so malformed, not unsupported.
    return {400,
            "malformed HTTP request: Transfer-Encoding conflicts with Content-Length or "
            "repeats chunked (send one of them, once)"};
  }
  return {400, "malformed HTTP request: " + ec.message()};
}

bool from_beast(BeastRequest&& in, const Limits& limits, HttpRequest* out, int* status,
                std::string* why) {
  size_t fields = 0;
  for (auto it = in.begin(); it != in.end(); ++it) ++fields;
  if (fields > limits.max_headers) {
    *status = 431;
    *why = "request has " + std::to_string(fields) + " header fields; the limit is " +
           std::to_string(limits.max_headers);
    return false;
  }
  if (in.version() != 10 && in.version() != 11) {
    *status = 505;
    *why = "only HTTP/1.0 and HTTP/1.1 are served";
    return false;
  }
  out->method = std::string(in.method_string());
  out->target = std::string(in.target());
  if (in.method() == bhttp::verb::connect) {
    *status = 501;
    *why = "CONNECT is not served: this server is not a proxy";
    return false;
  }
  if (!decode_target(out->target, out, why)) {
    *status = 400;
    return false;
  }
  if (out->path == "*" && in.method() != bhttp::verb::options) {
    *status = 400;
    *why = "the request target '*' is only for OPTIONS";
    return false;
  }
  out->version = static_cast<int>(in.version());
  out->keep_alive = in.keep_alive();
  out->headers.clear();
  out->headers.reserve(fields);
  for (const auto& field : in) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out->headers.emplace_back(std::move(name), std::string(field.value()));
  }
  out->body = std::move(in.body());
  return true;
}

bool is_framing_field(std::string_view name) {
  for (const std::string_view framing : {"content-length", "transfer-encoding", "connection",
                                         "trailer", "keep-alive", "upgrade"}) {
    if (boost::beast::iequals(name, framing)) return true;
  }
  return false;
}

void add_fields(const Headers& headers, std::initializer_list<bhttp::field> replaced,
                bhttp::fields* fields) {
  for (const auto& [name, value] : headers) {
    if (is_framing_field(name)) continue;
    const bhttp::field known = bhttp::string_to_field(name);
    const bool replace = known != bhttp::field::unknown &&
                         std::find(replaced.begin(), replaced.end(), known) != replaced.end();
    if (replace) {
      fields->set(known, value);
    } else {
      fields->insert(name, value);
    }
  }
}

BeastResponse to_beast(HttpResponse&& response, int version, bool keep_alive, bool head) {
  BeastResponse out{static_cast<bhttp::status>(response.status), static_cast<unsigned>(version)};
  out.set(bhttp::field::server, "zeus");
  if (!response.content_type.empty()) out.set(bhttp::field::content_type, response.content_type);
  add_fields(response.headers, {bhttp::field::server, bhttp::field::content_type}, &out);
  out.keep_alive(keep_alive && !response.close);
  // 204 and 304 answers carry no body and no Content-Length (RFC 9110 8.6, 15.3.5, 15.4.5).
  if (response.status == 204 || response.status == 304) return out;
  const size_t length = response.body.size();
  if (!head) out.body() = std::move(response.body);
  out.content_length(length);
  return out;
}

}  // namespace detail
}  // namespace zeus::http
