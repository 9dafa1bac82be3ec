// HttpClient: the HTTP/1.1 client of every part of the project that calls a server (the
// batch-size client, the zeusd client, the load generators), on the same library as the servers
// (Boost.Beast). Requests are synchronous for the caller, with one deadline each covering
// connect, write and read; connections are kept alive in a small pool and reused; streamed bodies
// (Server-Sent Events, streamed answers) are read piece by piece.
//
// A kept-alive connection the server has closed in the meantime is noticed before it is reused and
// replaced; with retry_on_stale_connection, a request that still fails on a reused connection
// before any answer byte arrives is sent again once.
// HTTPS (tls()): the same client over TLS 1.2 or newer (Boost.Asio's SSL stream on OpenSSL). The
// server's certificate is verified against the system's CA store (plus ClientOptions::ca_file)
// and must name the host (DNS name or IP address); the host is sent as SNI.
// Thread-safety: request() and stream() may be called from many threads at once (each takes its
// own pooled connection). Failure: Unavailable naming the server and what failed (connect,
// TLS handshake with the certificate's problem, timeout, reset); an HTTP error status is an
// answer, not a failure.
//
//   auto client = zeus::http::HttpClient::tcp("127.0.0.1", 8000, {});
//   auto secure = zeus::http::HttpClient::tls("api.electricitymap.org", 443, {});
//   Result<HttpResponse> r = (*client)->request("GET", "/healthz");
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/message.h"
#include "zeus/common/result.h"

namespace zeus::http {

struct ClientOptions {
  double timeout_s = 30;               // per request (connect + write + read)
  bool keep_alive = true;
  size_t max_body_bytes = 16 << 20;    // of an answer
  size_t max_header_bytes = 64 << 10;  // of an answer
  size_t max_idle_connections = 16;    // kept for reuse
  // true: a request that failed on a reused connection before any byte of the answer arrived
  // is sent again once on a fresh connection. Only for idempotent requests: the server may have
  // acted on the first one (a batch-size service would dispatch a second trial).
  bool retry_on_stale_connection = false;
  // tls() only: a PEM file of CA certificates trusted besides the system's store (a private CA,
  // a test's self-signed certificate). Empty: the system's store only.
  std::string ca_file{};
};

class HttpClient {
 public:
  // A server at host:port (a name or an IPv4/IPv6 address, resolved once per connection).
  static Result<std::unique_ptr<HttpClient>> tcp(std::string host, int port, ClientOptions options);
  // A server at host:port over TLS (https): certificate and host name verified, SNI sent.
  // kInvalidArgument when options.ca_file cannot be read as PEM certificates.
  static Result<std::unique_ptr<HttpClient>> tls(std::string host, int port, ClientOptions options);
  // tcp() for scheme "http", tls() for "https" (options.ca_file, when empty, taken from the
  // environment variable ZEUS_CA_FILE); kInvalidArgument for any other scheme.
  static Result<std::unique_ptr<HttpClient>> for_scheme(std::string_view scheme, std::string host,
                                                        int port, ClientOptions options);
  // A server on a Unix socket.
  static Result<std::unique_ptr<HttpClient>> unix_socket(std::string path, ClientOptions options);

  virtual ~HttpClient() = default;

  // Sends one request (with a body: Content-Type application/json unless `headers` says
  // otherwise) and reads the whole answer.
  virtual Result<HttpResponse> request(std::string_view method, std::string_view target,
                                       std::string_view body = {},
                                       const Headers& headers = {}) = 0;

  // Sends one request and hands the answer's body to `on_data` piece by piece as it arrives
  // (transfer coding removed), until the body ends, on_data returns false, or no byte arrives for
  // `idle_timeout_s`. Answers the response's status, content type and headers (its body is
  // empty; the pieces went to on_data). A body read to its end leaves the connection in the pool
  // (unless the server closes it); one stopped early, cut or timed out closes it.
  Result<HttpResponse> stream(std::string_view method, std::string_view target,
                              std::string_view body, const Headers& headers,
                              const std::function<bool(std::string_view)>& on_data,
                              double idle_timeout_s) {
    return stream(method, target, body, headers, nullptr, on_data, idle_timeout_s);
  }
  // As above, and first hands the answer's status, content type and headers (body empty) to
  // `on_head` (when set), before any body piece; on_head returning false stops there (the body is
  // not read). A proxy answers its own client with them before the body arrives.
  virtual Result<HttpResponse> stream(std::string_view method, std::string_view target,
                                      std::string_view body, const Headers& headers,
                                      const std::function<bool(const HttpResponse&)>& on_head,
                                      const std::function<bool(std::string_view)>& on_data,
                                      double idle_timeout_s) = 0;

  // "http://host:port", "https://host:port" or "unix:/path", for messages.
  virtual std::string where() const = 0;
};

}  // namespace zeus::http
