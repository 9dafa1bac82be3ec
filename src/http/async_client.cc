#include "http/async_client.h"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <limits>
#include <optional>

#include "http/client_wire.h"
#include "http/tls_context.h"

namespace zeus::http {
namespace {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using boost::system::error_code;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

constexpr SteadyClock::time_point kNever = SteadyClock::time_point::max();

// One upstream connection: plain TCP or TLS over TCP, created on (and pooled for) one loop.
template <bool kTls>
struct UpstreamConnection {
  using Stream = std::conditional_t<kTls, asio::ssl::stream<tcp::socket>, tcp::socket>;

  explicit UpstreamConnection(const asio::any_io_executor& loop) : stream(loop), context(&of(loop)) {}
  UpstreamConnection(const asio::any_io_executor& loop, asio::ssl::context& tls)
      : stream(loop, tls), context(&of(loop)) {}

  static asio::execution_context& of(const asio::any_io_executor& loop) {
    return asio::query(loop, asio::execution::context);
  }
  tcp::socket& socket() { return boost::beast::get_lowest_layer(stream); }

  Stream stream;
  boost::beast::flat_buffer buffer;
  asio::execution_context* context;  // the loop's: reused only by exchanges on it
  bool reused = false;
};

template <bool kTls>
class AsyncClientImpl;

// One request and its answer, driven by completion handlers on the caller's executor, which runs
// one handler at a time (a connection's strand, or a loop with one thread). Deadlines move one
// timer lazily, as the server's connections do: a new deadline restarts the timer only when it is
// earlier than the pending expiry.
template <bool kTls>
class ExchangeImpl final : public Exchange, public std::enable_shared_from_this<ExchangeImpl<kTls>> {
 public:
  using Connection = UpstreamConnection<kTls>;

  ExchangeImpl(std::shared_ptr<AsyncClientImpl<kTls>> client, const asio::any_io_executor& loop,
               bhttp::request<bhttp::string_body> request, ExchangeHandlers handlers,
               double idle_timeout_s)
      : client_(std::move(client)), strand_(loop),
        timer_(strand_), request_(std::move(request)), handlers_(std::move(handlers)),
        idle_timeout_s_(idle_timeout_s) {}

  void begin() {
    asio::post(strand_, [self = this->shared_from_this()] { self->open_connection(); });
  }

  void resume() override {
    asio::post(strand_, [self = this->shared_from_this()] {
      if (self->finished_) return;
      if (!self->paused_) {
        self->resume_early_ = true;
        return;
      }
      self->paused_ = false;
      self->read_piece();
    });
  }

 private:
  template <class Fn>
  auto on_strand(Fn fn) {
    return asio::bind_executor(strand_, std::move(fn));
  }

  void open_connection() {
    conn_ = client_->take(strand_);
    if (conn_) return send();
    if constexpr (kTls) {
      conn_ = std::make_unique<Connection>(strand_, client_->tls());
    } else {
      conn_ = std::make_unique<Connection>(strand_);
    }
    arm(client_->options().timeout_s);
    resolver_.emplace(strand_);
    resolver_->async_resolve(
        client_->host(), std::to_string(client_->port()),
        on_strand([self = this->shared_from_this()](const error_code& ec,
                                                    const tcp::resolver::results_type& results) {
          if (ec && !self->timed_out_) {
            return self->finish(fail(ErrorCode::kUnavailable,
                                     "cannot resolve '" + self->client_->host() + "': " + ec.message()));
          }
          if (ec) return self->transport_failed("connecting", ec);
          asio::async_connect(self->conn_->socket(), results,
                              self->on_strand([self](const error_code& e, const tcp::endpoint&) {
                                self->connected(e);
                              }));
        }));
  }

  void connected(error_code ec) {
    if (ec) return transport_failed("connecting", ec);
    conn_->socket().set_option(tcp::no_delay(true), ec);
    if constexpr (kTls) {
      if (Result<void> named = detail::expect_peer(conn_->stream.native_handle(), client_->host());
          !named) {
        return finish(fail(named.error()));
      }
      conn_->stream.async_handshake(
          asio::ssl::stream_base::client,
          on_strand([self = this->shared_from_this()](const error_code& e) {
            if (e && !self->timed_out_) {
              return self->finish(fail(
                  ErrorCode::kUnavailable,
                  "cannot reach " + self->client_->where() + " (TLS handshake: " +
                      detail::handshake_failure(self->conn_->stream.native_handle(), e) + ")"));
            }
            if (e) return self->transport_failed("TLS handshake", e);
            self->send();
          }));
    } else {
      send();
    }
  }

  void send() {
    arm(client_->options().timeout_s);
    bhttp::async_write(conn_->stream, request_,
                       on_strand([self = this->shared_from_this()](const error_code& ec, size_t) {
                         if (ec) return self->failed_before_answer("sending the request", ec);
                         self->read_head();
                       }));
  }

  void read_head() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(client_->options().max_header_bytes));
    // No limit (the caller decides); not boost::none, which Boost < 1.81 compares with a
    // Content-Length and refuses.
    parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    if (request_.method() == bhttp::verb::head) parser_->skip(true);
    bhttp::async_read_header(conn_->stream, conn_->buffer, *parser_,
                             on_strand([self = this->shared_from_this()](const error_code& ec,
                                                                         size_t) {
                               self->on_head(ec);
                             }));
  }

  void on_head(const error_code& ec) {
    if (ec) return failed_before_answer("reading the answer", ec);
    if (detail::is_interim(parser_->get())) return read_head();  // the real answer follows
    if (auto problem = detail::check_response_header(parser_->get())) {
      return finish(tl::unexpected<Error>(detail::untrusted_answer(client_->where(), *problem)));
    }
    head_ = detail::head_of(parser_->get());
    head_.close = true;  // until the body is read to its end
    if (handlers_.on_head && !handlers_.on_head(head_)) return finish(head_);
    read_piece();
  }

  void read_piece() {
    if (parser_->is_done()) return body_ended();
    parser_->get().body().data = piece_;
    parser_->get().body().size = sizeof(piece_);
    arm(idle_timeout_s_);
    bhttp::async_read_some(conn_->stream, conn_->buffer, *parser_,
                           on_strand([self = this->shared_from_this()](error_code ec, size_t) {
                             self->on_piece(ec);
                           }));
  }

  void on_piece(error_code ec) {
    disarm();
    if (ec == bhttp::error::need_buffer) ec = {};
    if (!ec) ec = detail::parse_buffered(*parser_, conn_->buffer);
    const size_t n = sizeof(piece_) - parser_->get().body().size;
    Flow flow = Flow::kMore;
    if (n > 0) flow = handlers_.on_data(std::string_view(piece_, n));
    if (flow == Flow::kStop) return body_ended();
    // A body ended by the server closing; a TLS server may close without close_notify.
    if (ec == bhttp::error::end_of_stream || ec == asio::error::eof ||
        ec == asio::ssl::error::stream_truncated || timed_out_) {
      return body_ended();  // quiet for idle_timeout_s, or closed: the caller decides
    }
    if (ec) return transport_failed("reading the stream", ec);
    if (flow == Flow::kPause && !resume_early_) {
      paused_ = true;
      return;
    }
    resume_early_ = false;
    read_piece();
  }

  void body_ended() {
    head_.body_complete = parser_->is_done();
    head_.close = !head_.body_complete || !parser_->get().keep_alive();
    if (!head_.close && client_->options().keep_alive) client_->give_back(std::move(conn_));
    finish(head_);
  }

  void failed_before_answer(const std::string& doing, const error_code& ec) {
    // A kept-alive connection the server closed meanwhile: once more on a fresh one, if allowed.
    const bool stale = conn_->reused && !parser_got_bytes() && !timed_out_;
    if (stale && !retried_ && client_->options().retry_on_stale_connection) {
      retried_ = true;
      conn_.reset();
      parser_.reset();
      return open_connection();
    }
    transport_failed(doing, ec);
  }
  bool parser_got_bytes() const { return parser_ && parser_->got_some(); }

  void transport_failed(const std::string& doing, const error_code& ec) {
    const error_code why = timed_out_ ? error_code(asio::error::timed_out) : ec;
    finish(tl::unexpected<Error>(
        detail::transport_failure(client_->where(), client_->options().timeout_s, doing, why)));
  }

  void finish(Result<HttpResponse> end) {
    if (finished_) return;
    finished_ = true;
    disarm();
    timer_.cancel();
    if (conn_) {  // not given back: mid-answer or failed
      error_code ignored;
      conn_->socket().close(ignored);
      conn_.reset();
    }
    ExchangeHandlers handlers = std::move(handlers_);  // they may hold whoever holds this
    handlers_ = {};
    if (handlers.on_done) handlers.on_done(std::move(end));
  }

  void arm(double s) {
    timed_out_ = false;
    deadline_ = SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                         std::chrono::duration<double>(std::clamp(s, 0.0, 1e7)));
    if (deadline_ < timer_at_) start_timer(deadline_);
  }
  void disarm() { deadline_ = kNever; }
  void start_timer(SteadyClock::time_point at) {
    timer_at_ = at;
    const uint64_t wait = ++timer_wait_;
    timer_.expires_at(at);
    timer_.async_wait([self = this->shared_from_this(), wait](const error_code& ec) {
      if (ec || wait != self->timer_wait_ || self->finished_) return;
      self->timer_at_ = kNever;
      if (self->deadline_ == kNever) return;
      if (SteadyClock::now() < self->deadline_) return self->start_timer(self->deadline_);
      self->timed_out_ = true;
      error_code ignored;
      if (self->resolver_) self->resolver_->cancel();
      if (self->conn_) self->conn_->socket().cancel(ignored);
    });
  }

  std::shared_ptr<AsyncClientImpl<kTls>> client_;
  asio::any_io_executor strand_;  // the caller's: runs one handler at a time
  asio::steady_timer timer_;
  bhttp::request<bhttp::string_body> request_;
  ExchangeHandlers handlers_;
  const double idle_timeout_s_;
  std::unique_ptr<Connection> conn_;
  std::optional<tcp::resolver> resolver_;
  std::optional<bhttp::response_parser<bhttp::buffer_body>> parser_;
  HttpResponse head_;
  char piece_[16 * 1024];
  SteadyClock::time_point deadline_ = kNever, timer_at_ = kNever;
  uint64_t timer_wait_ = 0;
  bool timed_out_ = false, finished_ = false, paused_ = false, resume_early_ = false;
  bool retried_ = false;
};

template <bool kTls>
class AsyncClientImpl final : public AsyncHttpClient,
                              public std::enable_shared_from_this<AsyncClientImpl<kTls>> {
 public:
  using Connection = UpstreamConnection<kTls>;

  AsyncClientImpl(std::string host, int port, ClientOptions options,
                  std::shared_ptr<asio::ssl::context> tls)
      : host_(std::move(host)), port_(port), options_(std::move(options)), tls_(std::move(tls)) {}

  std::shared_ptr<Exchange> start(const asio::any_io_executor& loop, std::string_view method,
                                  std::string_view target, std::string_view body,
                                  const Headers& headers, ExchangeHandlers handlers,
                                  double idle_timeout_s) override {
    auto exchange = std::make_shared<ExchangeImpl<kTls>>(
        this->shared_from_this(), loop,
        detail::build_request(method, target, detail::host_field(kTls, host_, port_), body,
                              headers, options_.keep_alive),
        std::move(handlers), idle_timeout_s);
    exchange->begin();
    return exchange;
  }

  void close_idle() override { idle_.clear(); }

  std::string where() const override {
    return detail::server_url(kTls, host_, port_);
  }

  // A pooled connection of `loop` that is still open (one the server closed is dropped).
  std::unique_ptr<Connection> take(const asio::any_io_executor& loop) {
    asio::execution_context* context = &Connection::of(loop);
    return idle_.take([context](const Connection& conn) { return conn.context == context; });
  }
  void give_back(std::unique_ptr<Connection> conn) { idle_.give_back(std::move(conn)); }

  const std::string& host() const { return host_; }
  int port() const { return port_; }
  const ClientOptions& options() const { return options_; }
  asio::ssl::context& tls() { return *tls_; }

 private:
  std::string host_;
  int port_;
  ClientOptions options_;
  std::shared_ptr<asio::ssl::context> tls_;
  detail::IdlePool<Connection> idle_{options_.max_idle_connections};
};

}  // namespace

Result<std::shared_ptr<AsyncHttpClient>> AsyncHttpClient::for_scheme(std::string_view scheme,
                                                                     std::string host, int port,
                                                                     ClientOptions options) {
  Result<bool> secure = detail::scheme_is_tls(scheme);  // the blocking client's checks
  if (!secure) return fail(secure.error());
  ZEUS_TRY(detail::check_client_options(options));
  ZEUS_TRY(detail::check_host_port(host, port));
  if (!*secure) {
    return std::shared_ptr<AsyncHttpClient>(
        std::make_shared<AsyncClientImpl<false>>(std::move(host), port, options, nullptr));
  }
  detail::ca_file_from_environment(&options);
  Result<std::shared_ptr<asio::ssl::context>> context = detail::make_tls_context(options.ca_file);
  if (!context) return fail(context.error());
  return std::shared_ptr<AsyncHttpClient>(std::make_shared<AsyncClientImpl<true>>(
      std::move(host), port, std::move(options), std::move(*context)));
}

}  // namespace zeus::http
