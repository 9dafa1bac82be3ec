// The Reply, EventStream and BodyStream of one request (server.h), internal to src/http: a Reply
// posts its answer to the connection's strand; an EventStream formats events and a BodyStream
// frames body pieces onto a StreamQueue (stream_queue.h), which the connection writes in order.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "http/server.h"
#include "http/server_core.h"
#include "http/stream_queue.h"

namespace zeus::http::detail {

class EventStreamImpl final : public EventStream {
 public:
  explicit EventStreamImpl(std::shared_ptr<StreamQueue> queue) : queue_(std::move(queue)) {}
  bool send(std::string_view data, std::string_view name) override;
  bool comment(std::string_view text) override;
  void close() override { queue_->close(); }
  bool open() const override { return queue_->open(); }

 private:
  std::shared_ptr<StreamQueue> queue_;
};

class BodyStreamImpl final : public BodyStream {
 public:
  // `chunked`: HTTP/1.1 framing; `discard`: a HEAD request, whose answer has no body.
  BodyStreamImpl(std::shared_ptr<StreamQueue> queue, bool chunked, bool discard)
      : queue_(std::move(queue)), chunked_(chunked), discard_(discard) {}
  bool write(std::string_view bytes) override;
  Queued write_nowait(std::string_view bytes, std::function<void()> on_room) override;
  bool finish(const Headers& trailers) override;
  void abort() override;
  bool open() const override { return queue_->open() && !finished_.load(); }

 private:
  std::shared_ptr<StreamQueue> queue_;
  const bool chunked_;
  const bool discard_;
  std::atomic<bool> finished_{false};
};

// Chunked transfer coding (RFC 9112 §7.1): one chunk of `bytes`, and the last chunk with its
// trailer section (fields whose name is not a token or whose value is not visible ASCII are
// left out).
std::string chunk_of(std::string_view bytes);
std::string last_chunk(const Headers& trailers);

class ReplyImpl final : public Reply, public std::enable_shared_from_this<ReplyImpl> {
 public:
  ReplyImpl(ServerCore& core, std::weak_ptr<SessionHandle> session,
            std::shared_ptr<const Peer> peer, HttpRequest request, bool inline_request)
      : core_(core), session_(std::move(session)), peer_(std::move(peer)),
        request_(std::move(request)), inline_(inline_request) {}
  ~ReplyImpl() override;  // a request nobody answered gets 500, never a hung connection

  bool send(HttpResponse response) override;
  void answer_by(double seconds, HttpResponse fallback) override;
  std::shared_ptr<EventStream> start_events() override;
  std::shared_ptr<BodyStream> start_body(StreamHead head) override;
  bool answered() const override { return answered_->load(); }
  bool client_gone() const override {
    auto s = session_.lock();
    return !s || s->state.load() == SessionState::kClosed || s->peer_finished.load();
  }

  const HttpRequest& request() const { return request_; }
  const Peer& peer() const { return *peer_; }
  bool inline_request() const { return inline_; }
  HttpResponse error_answer(int status, std::string_view message) const {
    return core_.error_answer(status, message);
  }
  // The connection's strand (loop_of in async_client.h).
  boost::asio::any_io_executor loop() const;
  void run_on_workers(std::function<void()> job);

 private:
  ServerCore& core_;  // used only while the connection (hence the server) is alive
  std::weak_ptr<SessionHandle> session_;
  std::shared_ptr<const Peer> peer_;
  HttpRequest request_;
  const bool inline_;
  std::shared_ptr<std::atomic<bool>> answered_ = std::make_shared<std::atomic<bool>>(false);
  std::mutex timer_mu_;
  std::shared_ptr<boost::asio::steady_timer> timer_;  // answer_by's deadline
};

}  // namespace zeus::http::detail
