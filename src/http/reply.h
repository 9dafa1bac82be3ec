// The Reply and EventStream of one request (server.h), internal to src/http: a Reply posts its
// answer to the connection's strand; an EventStream queues events with a byte bound and lets the
// connection write them in order, dropping a listener that falls too far behind.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "http/server.h"
#include "http/server_core.h"

namespace zeus::http::detail {

class EventStreamImpl final : public EventStream {
 public:
  EventStreamImpl(std::weak_ptr<SessionHandle> session, size_t max_buffer_bytes)
      : session_(std::move(session)), max_bytes_(max_buffer_bytes) {}
  bool send(std::string_view data, std::string_view name) override;
  void close() override;
  bool open() const override;

  // On the connection's strand: every queued event, in order (false: none; the pump stops).
  bool take(std::string* out);
  void written(size_t bytes);  // what take() gave has been written
  bool closed() const;
  void mark_gone();  // the listener went away or the connection failed

 private:
  void schedule_pump_locked();

  // Weak: a stream (or Reply) kept by the application after its connection, or the whole
  // server, is gone must not keep the connection's socket and strand alive.
  std::weak_ptr<SessionHandle> session_;
  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::deque<std::string> queue_;
  size_t queued_bytes_ = 0;
  bool closed_ = false;
  bool gone_ = false;
  bool pump_scheduled_ = false;
};

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
  bool answered() const override { return answered_->load(); }
  bool client_gone() const override {
    auto s = session_.lock();
    return !s || s->state.load() == SessionState::kClosed || s->peer_finished.load();
  }

  const HttpRequest& request() const { return request_; }
  const Peer& peer() const { return *peer_; }
  bool inline_request() const { return inline_; }
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
