#include "http/client_wire.h"

#include <boost/asio/error.hpp>
#include <boost/beast/core/string.hpp>
#include <poll.h>

#include <cmath>
#include <cstdlib>

#include "http/beast_mapping.h"

namespace zeus::http::detail {
namespace bhttp = boost::beast::http;

Result<void> check_client_options(const ClientOptions& o) {
  // At most a day: a deadline converts to nanoseconds, which overflow near 9.2e9 s (a timeout of
  // 1e12 s timed out at once, "no answer within 1000000000000 s").
  if (!(o.timeout_s > 0 && o.timeout_s <= 86400)) {
    return fail(ErrorCode::kInvalidArgument,
                "client timeout must be above 0 s and at most a day (86400 s)");
  }
  if (o.max_body_bytes < 1 || o.max_header_bytes < 256) {
    return fail(ErrorCode::kInvalidArgument, "client answer limits are too small");
  }
  return ok();
}

Result<void> check_host_port(std::string& host, int port) {
  if (host.empty()) return fail(ErrorCode::kInvalidArgument, "the server's host is empty");
  if (port < 1 || port > 65535) return fail(ErrorCode::kInvalidArgument, "port must be in 1-65535");
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return ok();
}

Result<bool> scheme_is_tls(std::string_view scheme) {
  if (scheme == "http") return false;
  if (scheme == "https") return true;
  return fail(ErrorCode::kInvalidArgument, "scheme '" + std::string(scheme) +
                                               "' is not http or https; give an http:// or "
                                               "https:// URL");
}

void ca_file_from_environment(ClientOptions* options) {
  if (const char* ca_file = std::getenv("ZEUS_CA_FILE"); options->ca_file.empty() && ca_file) {
    options->ca_file = ca_file;
  }
}

namespace {
std::string bracketed(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}
}  // namespace

std::string server_url(bool tls, const std::string& host, int port) {
  return (tls ? "https://" : "http://") + bracketed(host) + ":" + std::to_string(port);
}

std::string host_field(bool tls, const std::string& host, int port) {
  if (host.empty()) return "localhost";
  if (port <= 0 || port == (tls ? 443 : 80)) return bracketed(host);
  return bracketed(host) + ":" + std::to_string(port);
}

bhttp::request<bhttp::string_body> build_request(std::string_view method, std::string_view target,
                                                 const std::string& host, std::string_view body,
                                                 const Headers& headers, bool keep_alive) {
  bhttp::request<bhttp::string_body> request{bhttp::string_to_verb(method), target, 11};
  if (request.method() == bhttp::verb::unknown) request.method_string(method);
  request.set(bhttp::field::host, host);
  request.set(bhttp::field::user_agent, "zeus");
  add_fields(headers, {bhttp::field::host, bhttp::field::user_agent, bhttp::field::content_type},
             &request);
  if (!body.empty()) {
    request.body() = std::string(body);
    if (request.find(bhttp::field::content_type) == request.end()) {
      request.set(bhttp::field::content_type, "application/json");
    }
  }
  request.keep_alive(keep_alive);
  request.prepare_payload();
  return request;
}

HttpResponse head_of(const bhttp::response_header<>& header) {
  HttpResponse out;
  out.status = static_cast<int>(header.result_int());
  out.content_type = std::string(header[bhttp::field::content_type]);
  for (const auto& field : header) {
    out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  return out;
}

namespace {
std::string seconds_text(double s) {
  std::string text = std::to_string(s);
  text.erase(text.find_last_not_of('0') + 1);
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text + " s";
}
}  // namespace

Error transport_failure(const std::string& where, double timeout_s, const std::string& doing,
                        const boost::system::error_code& ec) {
  const std::string why = ec == boost::asio::error::timed_out
                              ? "no answer within " + seconds_text(timeout_s)
                              : ec.message();
  return Error{ErrorCode::kUnavailable, "cannot reach " + where + " (" + doing + ": " + why + ")"};
}

Error untrusted_answer(const std::string& where, const HeaderProblem& problem) {
  return Error{ErrorCode::kUnavailable,
               "the server at " + where + " sent an answer we cannot trust: " + problem.why};
}

boost::system::error_code parse_buffered(bhttp::response_parser<bhttp::buffer_body>& parser,
                                         boost::beast::flat_buffer& buffer) {
  // Without the parser's eager option, each put() parses one element (a chunk's header or its
  // data) and returns; eager parsing would instead wait for the next chunk's header to arrive.
  while (buffer.size() > 0 && parser.get().body().size > 0 && !parser.is_done()) {
    boost::system::error_code ec;
    const size_t used = parser.put(buffer.data(), ec);
    buffer.consume(used);
    if (ec == bhttp::error::need_more || ec == bhttp::error::need_buffer) break;
    if (ec) return ec;
    if (used == 0) break;
  }
  return {};
}

bool idle_connection_reusable(int fd, size_t buffered_bytes) {
  pollfd p{fd, POLLIN, 0};
  return buffered_bytes == 0 && ::poll(&p, 1, 0) == 0;
}

}  // namespace zeus::http::detail
