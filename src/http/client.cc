#include "http/client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <sys/un.h>

#include "http/client_wire.h"
#include "http/header_checks.h"
#include "http/tls_context.h"

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace zeus::http {
namespace {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

Clock::time_point deadline_in(double s) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// The two kinds of connection: what the client speaks over (Stream) and its socket's protocol.
// Plain HTTP over TCP and over a Unix socket share one: Asio's generic stream socket connects to
// either endpoint, so Beast's reads and writes are compiled once for both.
struct PlainTransport {
  using Protocol = asio::generic::stream_protocol;
  using Stream = Protocol::socket;
};
struct TlsTransport {
  using Protocol = asio::ip::tcp;
  using Stream = asio::ssl::stream<Protocol::socket>;
};
template <class T>
constexpr bool kIsTls = std::is_same_v<T, TlsTransport>;

// One connection with its own event loop: each operation runs on it until done or the deadline,
// when the socket is closed (the operation then ends with timed_out).
template <class Transport>
struct Connection {
  template <class... Args>
  explicit Connection(Args&... args) : stream(io, args...) {}

  typename Transport::Protocol::socket& socket() { return boost::beast::get_lowest_layer(stream); }

  asio::io_context io{1};
  typename Transport::Stream stream;
  boost::beast::flat_buffer buffer;
  bool reused = false;

  template <class Start>
  error_code run(Clock::time_point deadline, Start start) {
    error_code result = asio::error::would_block;
    bool done = false;
    start([&](const error_code& ec, auto&&...) {
      result = ec;
      done = true;
    });
    io.restart();
    io.run_until(deadline);
    if (!done) {
      error_code ignored;
      socket().close(ignored);
      io.restart();
      io.run();
      return asio::error::timed_out;
    }
    return result;
  }
};

template <class Transport>
class Client final : public HttpClient {
 public:
  using Conn = Connection<Transport>;

  Client(std::string host, int port, std::string path, ClientOptions options,
         std::shared_ptr<asio::ssl::context> tls = nullptr)
      : host_(std::move(host)), port_(port), path_(std::move(path)), options_(std::move(options)),
        tls_(std::move(tls)) {}

  Result<HttpResponse> request(std::string_view method, std::string_view target,
                               std::string_view body, const Headers& headers) override {
    return exchange(method, target, body, headers, nullptr, 0);
  }

  Result<HttpResponse> stream(std::string_view method, std::string_view target,
                              std::string_view body, const Headers& headers,
                              const std::function<bool(const HttpResponse&)>& on_head,
                              const std::function<bool(std::string_view)>& on_data,
                              double idle_timeout_s) override {
    const StreamCallbacks callbacks{on_head, on_data};
    return exchange(method, target, body, headers, &callbacks, idle_timeout_s);
  }

  std::string where() const override {
    if (unix_socket()) return "unix:" + path_;
    return detail::server_url(kIsTls<Transport>, host_, port_);
  }

 private:
  struct StreamCallbacks {
    const std::function<bool(const HttpResponse&)>& on_head;
    const std::function<bool(std::string_view)>& on_data;
  };

  Result<HttpResponse> exchange(std::string_view method, std::string_view target,
                                std::string_view body, const Headers& headers,
                                const StreamCallbacks* streaming, double idle_timeout_s) {
    const Clock::time_point deadline = deadline_in(options_.timeout_s);
    auto request =
        detail::build_request(method, target, detail::host_field(kIsTls<Transport>, host_, port_),
                              body, headers, options_.keep_alive);

    for (int attempt = 0; attempt < 2; ++attempt) {
      std::unique_ptr<Conn> conn = take();
      if (!conn) {
        Result<std::unique_ptr<Conn>> fresh = connect(deadline);
        if (!fresh) return fail(fresh.error());
        conn = std::move(*fresh);
      }
      const bool reused = conn->reused;
      bool got_bytes = false;
      Result<HttpResponse> answer =
          streaming ? read_stream(*conn, request, deadline, *streaming, idle_timeout_s, &got_bytes)
                  : read_whole(*conn, request, deadline, &got_bytes);
      if (!answer && reused && !got_bytes && options_.retry_on_stale_connection) continue;
      // A stream's close stays set unless its body was read to its end (read_stream): a
      // connection is reused only after a whole answer, never in the middle of one.
      if (answer && !answer->close && options_.keep_alive) give_back(std::move(conn));
      return answer;
    }
    return fail(ErrorCode::kUnavailable, "the server at " + where() + " closed the connection");
  }

  // Reads the answer's head into a new *parser (the body up to `body_limit` bytes), past interim
  // answers (100 Continue, 103 Early Hints); *got_bytes once any byte of an answer came.
  template <class Body>
  error_code read_head(Conn& conn, Clock::time_point deadline,
                       const bhttp::request<bhttp::string_body>& request, std::uint64_t body_limit,
                       std::optional<bhttp::response_parser<Body>>* parser, bool* got_bytes) {
    error_code ec;
    do {
      parser->emplace();
      (*parser)->header_limit(static_cast<std::uint32_t>(options_.max_header_bytes));
      (*parser)->body_limit(body_limit);
      if (request.method() == bhttp::verb::head) (*parser)->skip(true);
      ec = conn.run(deadline, [&](auto handler) {
        bhttp::async_read_header(conn.stream, conn.buffer, **parser, handler);
      });
      *got_bytes = *got_bytes || (*parser)->got_some();
    } while (!ec && detail::is_interim((*parser)->get()));
    return ec;
  }

  Result<HttpResponse> read_whole(Conn& conn, bhttp::request<bhttp::string_body>& request,
                                  Clock::time_point deadline, bool* got_bytes) {
    error_code ec = conn.run(deadline, [&](auto handler) {
      bhttp::async_write(conn.stream, request, handler);
    });
    if (ec) return transport_failure("sending the request", ec);
    std::optional<bhttp::response_parser<bhttp::string_body>> parser;
    ec = read_head(conn, deadline, request, options_.max_body_bytes, &parser, got_bytes);
    if (ec) return transport_failure("reading the answer", ec);
    if (auto problem = detail::check_response_header(parser->get())) return malformed(*problem);
    if (!parser->is_done()) {
      ec = conn.run(deadline, [&](auto handler) {
        bhttp::async_read(conn.stream, conn.buffer, *parser, handler);
      });
      if (ec) return transport_failure("reading the answer", ec);
    }
    auto& message = parser->get();
    HttpResponse out = detail::head_of(message);
    out.close = !message.keep_alive();
    out.body = std::move(message.body());
    return out;
  }

  Result<HttpResponse> read_stream(Conn& conn, bhttp::request<bhttp::string_body>& request,
                                   Clock::time_point deadline, const StreamCallbacks& callbacks,
                                   double idle_timeout_s, bool* got_bytes) {
    error_code ec = conn.run(deadline, [&](auto handler) {
      bhttp::async_write(conn.stream, request, handler);
    });
    if (ec) return transport_failure("sending the request", ec);
    // No body limit. Not boost::none: before Boost 1.81 the parser compares a Content-Length
    // with an empty limit and refuses every answer that has one ("body limit exceeded").
    std::optional<bhttp::response_parser<bhttp::buffer_body>> head;
    ec = read_head(conn, deadline, request, std::numeric_limits<std::uint64_t>::max(), &head,
                   got_bytes);
    if (ec) return transport_failure("reading the answer", ec);
    bhttp::response_parser<bhttp::buffer_body>& parser = *head;
    if (auto problem = detail::check_response_header(parser.get())) return malformed(*problem);
    HttpResponse out = detail::head_of(parser.get());
    out.close = true;  // until the body is read to its end
    if (callbacks.on_head && !callbacks.on_head(out)) return out;
    char piece[16 * 1024];
    while (!parser.is_done()) {
      parser.get().body().data = piece;
      parser.get().body().size = sizeof(piece);
      ec = conn.run(deadline_in(idle_timeout_s), [&](auto handler) {
        bhttp::async_read_some(conn.stream, conn.buffer, parser, handler);
      });
      if (ec == bhttp::error::need_buffer) ec = {};
      if (!ec) ec = detail::parse_buffered(parser, conn.buffer);
      const size_t n = sizeof(piece) - parser.get().body().size;
      if (n > 0 && !callbacks.on_data(std::string_view(piece, n))) break;
      // A TLS server that closes without close_notify ends a body read to the close the same way.
      if (ec == bhttp::error::end_of_stream || ec == asio::error::eof ||
          ec == asio::ssl::error::stream_truncated) {
        break;
      }
      if (ec == asio::error::timed_out) break;  // quiet for idle_timeout_s: the caller decides
      if (ec) return transport_failure("reading the stream", ec);
    }
    out.body_complete = parser.is_done();
    // Read to its end: the connection may serve the next request, as after a whole answer (a
    // body ended by the server closing, or cut, stopped or timed out, leaves close set).
    out.close = !out.body_complete || !parser.get().keep_alive();
    return out;
  }

  Result<std::unique_ptr<Conn>> connect(Clock::time_point deadline) {
    std::unique_ptr<Conn> conn;
    if constexpr (kIsTls<Transport>) {
      conn = std::make_unique<Conn>(*tls_);
    } else {
      conn = std::make_unique<Conn>();
    }
    error_code ec;
    if (unix_socket()) {
      if constexpr (!kIsTls<Transport>) {
        ec = conn->run(deadline, [&](auto handler) {
          conn->socket().async_connect(asio::local::stream_protocol::endpoint(path_), handler);
        });
      }
    } else {
      asio::ip::tcp::resolver resolver(conn->io);
      auto endpoints = resolver.resolve(host_, std::to_string(port_), ec);
      if (ec) {
        return fail(ErrorCode::kUnavailable, "cannot resolve '" + host_ + "': " + ec.message());
      }
      // The generic socket connects to generic endpoints: the resolved ones, converted.
      using Socket = typename Transport::Protocol::socket;
      std::vector<typename Socket::endpoint_type> targets;
      for (const auto& entry : endpoints) targets.emplace_back(entry.endpoint());
      ec = conn->run(deadline, [&](auto handler) {
        asio::async_connect(conn->socket(), targets, handler);
      });
      if (!ec) conn->socket().set_option(asio::ip::tcp::no_delay(true), ec);
    }
    if (ec) return transport_failure("connecting", ec);
    if constexpr (kIsTls<Transport>) {
      ZEUS_TRY(detail::expect_peer(conn->stream.native_handle(), host_));
      ec = conn->run(deadline, [&](auto handler) {
        conn->stream.async_handshake(asio::ssl::stream_base::client, handler);
      });
      if (ec == asio::error::timed_out) return transport_failure("TLS handshake", ec);
      if (ec) {
        return fail(ErrorCode::kUnavailable,
                    "cannot reach " + where() + " (TLS handshake: " +
                        detail::handshake_failure(conn->stream.native_handle(), ec) + ")");
      }
    }
    return conn;
  }

  tl::unexpected<Error> transport_failure(const std::string& doing, const error_code& ec) const {
    return tl::unexpected<Error>(detail::transport_failure(where(), options_.timeout_s, doing, ec));
  }

  tl::unexpected<Error> malformed(const detail::HeaderProblem& problem) const {
    return tl::unexpected<Error>(detail::untrusted_answer(where(), problem));
  }

  bool unix_socket() const { return !path_.empty(); }

  std::unique_ptr<Conn> take() {
    return idle_.take([](const Conn&) { return true; });
  }
  void give_back(std::unique_ptr<Conn> conn) { idle_.give_back(std::move(conn)); }

  std::string host_;
  int port_ = 0;
  std::string path_;
  ClientOptions options_;
  std::shared_ptr<asio::ssl::context> tls_;  // TlsTransport only: trust store and TLS settings
  detail::IdlePool<Conn> idle_{options_.max_idle_connections};
};

}  // namespace

Result<std::unique_ptr<HttpClient>> HttpClient::tcp(std::string host, int port,
                                                    ClientOptions options) {
  ZEUS_TRY(detail::check_client_options(options));
  ZEUS_TRY(detail::check_host_port(host, port));
  return std::unique_ptr<HttpClient>(
      std::make_unique<Client<PlainTransport>>(std::move(host), port, "", std::move(options)));
}

Result<std::unique_ptr<HttpClient>> HttpClient::tls(std::string host, int port,
                                                    ClientOptions options) {
  ZEUS_TRY(detail::check_client_options(options));
  ZEUS_TRY(detail::check_host_port(host, port));
  Result<std::shared_ptr<asio::ssl::context>> context = detail::make_tls_context(options.ca_file);
  if (!context) return fail(context.error());
  return std::unique_ptr<HttpClient>(std::make_unique<Client<TlsTransport>>(
      std::move(host), port, "", std::move(options), std::move(*context)));
}

Result<std::unique_ptr<HttpClient>> HttpClient::for_scheme(std::string_view scheme,
                                                           std::string host, int port,
                                                           ClientOptions options) {
  Result<bool> secure = detail::scheme_is_tls(scheme);
  if (!secure) return fail(secure.error());
  if (!*secure) return tcp(std::move(host), port, std::move(options));
  detail::ca_file_from_environment(&options);
  return tls(std::move(host), port, std::move(options));
}

Result<std::unique_ptr<HttpClient>> HttpClient::unix_socket(std::string path, ClientOptions options) {
  ZEUS_TRY(detail::check_client_options(options));
  if (path.empty()) return fail(ErrorCode::kInvalidArgument, "the socket path is empty");
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return fail(ErrorCode::kInvalidArgument, "socket path too long (at most 107 bytes): " + path);
  }
  return std::unique_ptr<HttpClient>(
      std::make_unique<Client<PlainTransport>>("", 0, std::move(path), std::move(options)));
}
}  // namespace zeus::http
