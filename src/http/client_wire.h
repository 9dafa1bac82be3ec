// What the blocking client (client.cc) and the asynchronous one (async_client.cc) share
// (internal to src/http): the checks of a server's address and options, the request as sent, the
// answer's head as handed to the caller, the errors naming the server and what failed, the
// parsing of what a streamed read left buffered, and the pool of kept-alive connections.
// Thread-safety: stateless functions; an IdlePool from any thread.
#pragma once

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "http/client.h"
#include "http/header_checks.h"
#include "http/message.h"
#include "zeus/common/result.h"

namespace zeus::http::detail {

// kInvalidArgument for a timeout that is not finite and > 0, or answer limits too small.
Result<void> check_client_options(const ClientOptions& options);
// kInvalidArgument for an empty host or a port outside 1-65535; "[::1]" becomes "::1".
Result<void> check_host_port(std::string& host, int port);
// "http": false, "https": true; anything else kInvalidArgument naming both.
Result<bool> scheme_is_tls(std::string_view scheme);
// options->ca_file, when empty, from the environment variable ZEUS_CA_FILE.
void ca_file_from_environment(ClientOptions* options);
// "http://host:port" or "https://host:port", an IPv6 address in brackets (for messages).
std::string server_url(bool tls, const std::string& host, int port);

// The Host field for a server at host:port: "localhost" when host is empty (a Unix socket);
// an IPv6 address in brackets; the port unless it is the scheme's default (80, 443).
std::string host_field(bool tls, const std::string& host, int port);

// An interim answer (1xx other than 101 Switching Protocols: 100 Continue, 103 Early Hints) that a
// server may send before the real one; the clients read past it.
inline bool is_interim(const boost::beast::http::response_header<>& header) {
  const unsigned status = header.result_int();
  return status >= 100 && status < 200 && status != 101;
}

// The request: method (any token), target, Host `host` (host_field), User-Agent zeus, `headers`
// (every field kept, a repeated one too; framing fields skipped; a Host, User-Agent or
// Content-Type among them replaces the default), and a body with Content-Type application/json
// unless `headers` has one.
boost::beast::http::request<boost::beast::http::string_body> build_request(
    std::string_view method, std::string_view target, const std::string& host,
    std::string_view body, const Headers& headers, bool keep_alive);

// Status, content type and header fields of an answer (body left empty).
HttpResponse head_of(const boost::beast::http::response_header<>& header);

// "cannot reach <where> (<doing>: <why>)", the why of a timeout naming `timeout_s`.
Error transport_failure(const std::string& where, double timeout_s, const std::string& doing,
                        const boost::system::error_code& ec);
// An answer whose framing a server would refuse (header_checks.h).
Error untrusted_answer(const std::string& where, const HeaderProblem& problem);

// After a read of a streamed body: parses the chunks `buffer` already holds into the room left
// in the parser's body buffer, one piece of the message per step and never waiting for input, so
// that one read hands on every chunk received (a server writing one chunk per token sends many
// at once), not one chunk per read. An error only for a malformed message.
boost::system::error_code parse_buffered(
    boost::beast::http::response_parser<boost::beast::http::buffer_body>& parser,
    boost::beast::flat_buffer& buffer);

// A pooled connection may be reused: nothing is buffered and the socket has nothing to read
// (a server that closed it makes it readable, at end of stream).
bool idle_connection_reusable(int fd, size_t buffered_bytes);

// A client's kept-alive connections (Connection: socket(), buffer, reused): taken newest first,
// each checked before reuse (one the server closed, or holding stray bytes, is dropped), at most
// `max_idle` kept. Thread-safety: every method from any thread.
template <class Connection>
class IdlePool {
 public:
  explicit IdlePool(size_t max_idle) : max_idle_(max_idle) {}
  // The newest reusable connection for which fits(connection) holds, marked reused; or null.
  template <class Fits>
  std::unique_ptr<Connection> take(Fits fits) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = idle_.size(); i-- > 0;) {
      if (!fits(*idle_[i])) continue;
      std::unique_ptr<Connection> conn = std::move(idle_[i]);
      idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
      if (!idle_connection_reusable(conn->socket().native_handle(), conn->buffer.size())) continue;
      conn->reused = true;
      return conn;
    }
    return nullptr;
  }
  void give_back(std::unique_ptr<Connection> conn) {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_.size() < max_idle_) idle_.push_back(std::move(conn));
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.clear();
  }

 private:
  const size_t max_idle_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_;
};

}  // namespace zeus::http::detail
