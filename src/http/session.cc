// One connection of an HttpServer (server.h): the request cycle on the connection's strand —
// wait for a request (idle deadline), read its headers (header deadline) and body (body
// deadline) with Boost.Beast's parser under the limits, hand it to the handler with a Reply, write
// the answer (write deadline), then the next request; or an event stream. A deadline cancels the
// pending read or write (the answer is 408 where one can still be written); errors close.
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <optional>

#include "http/beast_mapping.h"
#include "http/header_checks.h"
#include "http/reply.h"
#include "http/server_core.h"
#include "http/stream_queue.h"
#include "zeus/common/log.h"

namespace zeus::http::detail {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

constexpr size_t kMaxDrainBytes = 1 << 20;  // read and dropped after an error answer

std::chrono::steady_clock::duration seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::clamp(s, 0.0, 1e7)));
}

// One class for TCP and Unix-socket connections alike: Asio's generic stream socket takes either
// (moved in, the descriptor unchanged), so Beast's reads and writes are compiled once, not once per
// protocol. With the client's same change, the HTTP layer's largest unity batch compiles in 96 s
// instead of 120 with clang and the sanitizers, 49 instead of 54 with GCC -O2.
class Session final : public SessionHandle, public std::enable_shared_from_this<Session> {
 public:
  using Socket = asio::generic::stream_protocol::socket;

  Session(ServerCore& core, Socket socket, std::shared_ptr<const Peer> peer)
      : core_(core), socket_(std::move(socket)), timer_(socket_.get_executor()),
        peer_(std::move(peer)),
        buffer_(core.options.limits.max_header_bytes + core.options.limits.max_body_bytes + 4096) {}

  ~Session() override { release_body(); }

  void run() {
    asio::post(executor(), [self = shared_from_this()] { self->wait_for_request(); });
  }

  void refuse(const std::string& why) {
    error_code ignored;
    refuse_connection(core_, socket_.native_handle(), 503, why);
    socket_.close(ignored);
  }

  asio::any_io_executor executor() override { return socket_.get_executor(); }

  void close_now() override {
    asio::post(executor(), [self = shared_from_this()] { self->close(); });
  }

  void close_when_idle() override {
    asio::post(executor(), [self = shared_from_this()] {
      const SessionState s = self->state.load();
      if (s == SessionState::kIdle || s == SessionState::kReading) self->close();
      if (s == SessionState::kStreaming && self->stream_ && self->stream_events_) {
        self->stream_->close();
      }
      // kHandling/kWriting: the answer is written, then the connection closes (stopping).
    });
  }

  void write_response(HttpResponse response) override {
    if (state.load() != SessionState::kHandling) return;
    const bool keep = keep_alive_ && !response.close && !core_.stopping.load();
    write(to_beast(std::move(response), version_, keep, head_));
  }

  void start_stream(std::shared_ptr<StreamQueue> stream, StreamStart start) override {
    if (state.load() != SessionState::kHandling) {
      stream->mark_gone();
      return;
    }
    stream_ = std::move(stream);
    stream_events_ = start.events;
    // Kept alive after a chunked body (it ends on its own); an event stream or a body ended by
    // closing (HTTP/1.0) ends with the connection.
    stream_keep_alive_ = start.chunked && keep_alive_ && !core_.stopping.load();
    set_state(SessionState::kStreaming);
    auto header = std::make_shared<bhttp::response<bhttp::empty_body>>(
        static_cast<bhttp::status>(start.head.status), version_);
    header->set(bhttp::field::server, "zeus");
    if (!start.head.content_type.empty()) {
      header->set(bhttp::field::content_type, start.head.content_type);
    }
    add_fields(start.head.headers, {bhttp::field::server, bhttp::field::content_type},
               header.get());
    if (start.chunked) {
      header->chunked(true);
      std::string announced;
      for (const std::string& name : start.head.trailer_names) {
        announced.append(announced.empty() ? "" : ", ").append(name);
      }
      if (!announced.empty()) header->set(bhttp::field::trailer, announced);
    }
    header->keep_alive(stream_keep_alive_);
    auto serializer = std::make_shared<bhttp::response_serializer<bhttp::empty_body>>(*header);
    stream_writing_ = true;
    arm(core_.options.write_timeout_s);
    bhttp::async_write_header(socket_, *serializer,
                              [self = shared_from_this(), header, serializer](
                                  const error_code& ec, size_t) {
                                self->disarm();
                                self->stream_writing_ = false;
                                if (ec) return self->close();
                                self->pump_stream();
                              });
  }

  void pump_stream() override {
    if (!stream_ || stream_writing_ || state.load() == SessionState::kClosed) return;
    const StreamQueue::Take taken = stream_->take(&chunk_);
    if (taken == StreamQueue::Take::kWait) return;  // the next push schedules the pump again
    if (taken == StreamQueue::Take::kEnd) {
      // A whole chunked body leaves the connection ready for the next request; a dropped one
      // (the client fell behind), one cut short (abort) or one ended by closing ends the
      // connection.
      const bool reuse =
          !stream_->gone() && !stream_->cut() && stream_keep_alive_ && !core_.stopping.load();
      stream_.reset();
      return reuse ? wait_for_request() : shutdown_and_close();
    }
    stream_writing_ = true;
    arm(core_.options.write_timeout_s);
    asio::async_write(socket_, asio::buffer(chunk_),
                      [self = shared_from_this()](const error_code& ec, size_t) {
                        self->disarm();
                        self->stream_writing_ = false;
                        if (ec) return self->close();
                        self->stream_->written(self->chunk_.size());
                        self->pump_stream();
                      });
  }

 private:
  void set_state(SessionState s) {
    since_ns.store(now_ns());
    state.store(s);
  }

  // Deadlines: one timer, moved lazily. arm() and disarm() only set deadline_; the timer is
  // started again only when the new deadline is earlier than its pending expiry, and an expiry
  // that finds a later deadline (or none) waits on for it. A request's arms and disarms (idle,
  // headers, body, write) thus cost no timer system call and no cancelled handler each.
  void arm(double s) {
    timed_out_ = false;
    deadline_ = std::chrono::steady_clock::now() + seconds(s);
    if (deadline_ < timer_at_) start_timer(deadline_);
  }
  void disarm() { deadline_ = kNoDeadline; }
  void start_timer(std::chrono::steady_clock::time_point at) {
    timer_at_ = at;
    const uint64_t wait = ++timer_wait_;
    timer_.expires_at(at);  // a pending wait ends with operation_aborted
    timer_.async_wait([self = shared_from_this(), wait](const error_code& ec) {
      if (ec || wait != self->timer_wait_) return;  // cancelled or replaced by an earlier one
      self->timer_at_ = kNoDeadline;
      if (self->deadline_ == kNoDeadline || self->state.load() == SessionState::kClosed) return;
      if (std::chrono::steady_clock::now() < self->deadline_) {
        return self->start_timer(self->deadline_);  // moved later since: wait for it
      }
      self->timed_out_ = true;
      self->core_.timeouts.fetch_add(1);
      error_code ignored;
      self->socket_.cancel(ignored);
    });
  }

  void wait_for_request() {
    set_state(SessionState::kIdle);
    if (peer_finished.load()) return close();  // it sent its last request
    if (core_.stopping.load()) return close();
    if (buffer_.size() > 0) return read_header();  // pipelined
    error_code available_error;
    if (socket_.available(available_error) > 0) return read_header();  // already here: no wait
    arm(core_.options.idle_timeout_s);
    socket_.async_wait(Socket::wait_read, [self = shared_from_this()](const error_code& ec) {
      self->disarm();
      if (ec || self->timed_out_) return self->close();
      self->read_header();
    });
  }

  void read_header() {
    set_state(SessionState::kReading);
    parser_.emplace();
    apply_limits(core_.options.limits, &*parser_);
    arm(core_.options.header_timeout_s);
    bhttp::async_read_header(socket_, buffer_, *parser_,
                             [self = shared_from_this()](const error_code& ec, size_t) {
                               self->on_header(ec);
                             });
  }

  void on_header(const error_code& ec) {
    if (ec) return fail_read(ec, "headers", core_.options.header_timeout_s);
    const auto& request = parser_->get();
    // Framing and Host, before any body byte is read or the request is handled (smuggling).
    if (auto problem = check_request_header(request)) {
      return answer_and_close(problem->status, problem->why);
    }
    if (parser_->is_done()) return dispatch();
    if (!reserve_body()) {
      return answer_and_close(
          503, "the server is receiving " +
                   std::to_string(core_.body_bytes_reserved.load() >> 20) +
                   " MiB of request bodies at once, its most: retry in a moment");
    }
    if (bhttp::token_list{request[bhttp::field::expect]}.exists("100-continue") &&
        request.version() == 11) {
      // curl and others wait for this before sending a large body.
      static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      arm(core_.options.write_timeout_s);
      asio::async_write(socket_, asio::buffer(kContinue),
                        [self = shared_from_this()](const error_code& ec, size_t) {
                          if (ec) return self->close();
                          self->read_body();
                        });
      return;
    }
    read_body();
  }

  void read_body() {
    arm(core_.options.body_timeout_s);
    bhttp::async_read(socket_, buffer_, *parser_,
                      [self = shared_from_this()](const error_code& ec, size_t) {
                        if (ec) return self->fail_read(ec, "body", self->core_.options.body_timeout_s);
                        self->dispatch();
                      });
  }

  void fail_read(const error_code& ec, const char* part, double limit_s) {
    release_body();
    if (timed_out_) {
      return answer_and_close(408, std::string("the request's ") + part + " did not arrive within " +
                                       std::to_string(static_cast<int>(limit_s)) + " s");
    }
    if (ec == bhttp::error::end_of_stream || ec == asio::error::eof ||
        ec == asio::error::connection_reset || ec == asio::error::operation_aborted ||
        ec == bhttp::error::partial_message) {
      return close();
    }
    const auto received = buffer_.data();
    auto [status, message] = status_of_parse_error(
        ec, std::string_view(static_cast<const char*>(received.data()), received.size()),
        core_.options.limits);
    answer_and_close(status, message);
  }

  // Reserves this request's body (its Content-Length, or the most a chunked one may hold) from
  // the server's total; false when it does not fit.
  bool reserve_body() {
    const auto length = parser_->content_length();
    const size_t want = length ? static_cast<size_t>(*length) : core_.options.limits.max_body_bytes;
    const size_t budget = core_.total_body_budget();
    size_t now = core_.body_bytes_reserved.load();
    do {
      if (now + want > budget) return false;
    } while (!core_.body_bytes_reserved.compare_exchange_weak(now, now + want));
    body_reserved_ = want;
    return true;
  }

  void release_body() {
    if (body_reserved_ == 0) return;
    core_.body_bytes_reserved.fetch_sub(body_reserved_);
    body_reserved_ = 0;
  }

  void dispatch() {
    release_body();
    // A large body's buffer is not kept for the rest of a kept-alive connection.
    if (buffer_.size() == 0 && buffer_.capacity() > 64 * 1024) buffer_.shrink_to_fit();
    disarm();
    auto& parsed = parser_->get();
    head_ = parsed.method() == bhttp::verb::head;
    version_ = parsed.version() == 10 ? 10 : 11;
    HttpRequest request;
    int status = 0;
    std::string why;
    const bool mapped = from_beast(parser_->release(), core_.options.limits, &request, &status, &why);
    parser_.reset();
    if (!mapped) return answer_and_close(status, why);
    keep_alive_ = request.keep_alive;
    set_state(SessionState::kHandling);
    if (request.path == "*") {  // "OPTIONS *" (from_beast lets no other method through)
      HttpResponse about_the_server;
      about_the_server.content_type.clear();
      return write_response(std::move(about_the_server));
    }
    watch_for_hangup();
    const bool inline_request =
        core_.options.inline_request && core_.options.inline_request(request);
    auto reply = std::make_shared<ReplyImpl>(core_, shared_from_this(), peer_,
                                             std::move(request), inline_request);
    try {
      core_.handler(reply->request(), reply->peer(), reply);
    } catch (const std::exception& e) {
      log_error(core_.options.name + ": handler failed: " + e.what());
      reply->send(core_.error_answer(500, std::string("internal error: ") + e.what()));
    }
  }

  // While a request is being answered (a long-poll may take minutes), notice a peer that hangs
  // up. The connection stays until the answer is written (a client that only closed its sending
  // side still reads it), but the Reply reports client_gone(), so a waiter can be forgotten.
  void watch_for_hangup() {
    socket_.async_wait(Socket::wait_read, [self = shared_from_this()](const error_code& ec) {
      if (ec || self->state.load() != SessionState::kHandling) return;
      char byte;
      const ssize_t n = ::recv(self->socket_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        self->peer_finished.store(true);
      }
      // n > 0: the next request is already here (pipelined); it waits in the socket.
    });
  }

  void answer_and_close(int status, const std::string& message) {
    set_state(SessionState::kHandling);
    HttpResponse response = core_.error_answer(status, message);
    write(to_beast(std::move(response), 11, false, false));
  }

  void write(BeastResponse response) {
    set_state(SessionState::kWriting);
    auto message = std::make_shared<BeastResponse>(std::move(response));
    arm(core_.options.write_timeout_s);
    bhttp::async_write(socket_, *message,
                       [self = shared_from_this(), message](const error_code& ec, size_t) {
                         self->disarm();
                         if (ec) return self->close();
                         if (!message->keep_alive()) return self->shutdown_and_close();
                         self->wait_for_request();
                       });
  }

  // Ends the connection after an answer: stop sending, read and drop what the peer still sends
  // (briefly), then close — closing with unread bytes would reset the connection and could
  // destroy the answer before the peer reads it.
  void shutdown_and_close() {
    if (state.load() == SessionState::kClosed) return;
    error_code ignored;
    socket_.shutdown(Socket::shutdown_send, ignored);
    arm(1.0);
    drain();
  }
  void drain() {
    drain_buffer_.resize(16 * 1024);
    socket_.async_read_some(asio::buffer(drain_buffer_),
                            [self = shared_from_this()](const error_code& ec, size_t n) {
                              self->drained_ += n;
                              if (ec || self->timed_out_ || self->drained_ > kMaxDrainBytes) {
                                return self->close();
                              }
                              self->drain();
                            });
  }

  void close() {
    release_body();
    if (state.load() == SessionState::kClosed) return;
    set_state(SessionState::kClosed);
    disarm();
    timer_.cancel();  // its wait holds this session
    if (stream_) stream_->mark_gone();
    error_code ignored;
    socket_.shutdown(Socket::shutdown_both, ignored);
    socket_.close(ignored);
    core_.unregister(*this);
  }

  ServerCore& core_;
  Socket socket_;
  static constexpr std::chrono::steady_clock::time_point kNoDeadline =
      std::chrono::steady_clock::time_point::max();
  asio::steady_timer timer_;
  std::chrono::steady_clock::time_point deadline_ = kNoDeadline;  // of the operation under way
  std::chrono::steady_clock::time_point timer_at_ = kNoDeadline;  // the pending wait's expiry
  uint64_t timer_wait_ = 0;  // the pending wait (older ones' expiries are ignored)
  bool timed_out_ = false;
  std::shared_ptr<const Peer> peer_;
  boost::beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  size_t body_reserved_ = 0;  // of ServerCore::body_bytes_reserved, while a body is received
  unsigned version_ = 11;
  bool keep_alive_ = true;
  bool head_ = false;
  std::shared_ptr<StreamQueue> stream_;
  bool stream_events_ = false;
  bool stream_keep_alive_ = false;
  bool stream_writing_ = false;
  std::string chunk_;
  std::string drain_buffer_;
  size_t drained_ = 0;
};

}  // namespace

void start_session(ServerCore& core, Session::Socket socket, Peer peer) {
  const std::string key = peer.key;
  const bool privileged = peer.privileged;
  auto session = std::make_shared<Session>(
      core, std::move(socket), std::make_shared<const Peer>(std::move(peer)));
  session->id = core.next_id.fetch_add(1);
  session->peer_key = key;
  session->privileged = privileged;
  session->since_ns.store(now_ns());
  std::string why;
  if (!core.admit(session, &why)) return session->refuse(why);
  session->run();
}

}  // namespace zeus::http::detail
