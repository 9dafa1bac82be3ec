#include "http/reply.h"

#include <boost/asio/post.hpp>
#include <algorithm>
#include <chrono>

namespace zeus::http::detail {
namespace asio = boost::asio;

bool EventStreamImpl::send(std::string_view data, std::string_view name) {
  std::string event;
  event.reserve(data.size() + name.size() + 16);
  if (!name.empty()) event.append("event: ").append(name).append("\n");
  size_t start = 0;
  while (true) {  // one "data:" line per line, as the SSE format wants
    const size_t end = data.find('\n', start);
    event.append("data: ").append(data.substr(start, end - start)).append("\n");
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  event.append("\n");
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_ || gone_) return false;
  if (queued_bytes_ + event.size() > max_bytes_) {
    gone_ = true;  // a slow listener is dropped, not buffered without end
    queue_.clear();
    queued_bytes_ = 0;
    if (auto s = session_.lock()) s->close_now();
    return false;
  }
  queued_bytes_ += event.size();
  queue_.push_back(std::move(event));
  schedule_pump_locked();
  return true;
}

void EventStreamImpl::close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  closed_ = true;
  schedule_pump_locked();
}

bool EventStreamImpl::open() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !closed_ && !gone_;
}

void EventStreamImpl::schedule_pump_locked() {
  if (pump_scheduled_) return;
  auto session = session_.lock();
  if (!session) return;
  pump_scheduled_ = true;
  asio::post(session->executor(), [weak = session_] {
    if (auto s = weak.lock()) s->pump_stream();
  });
}

bool EventStreamImpl::take(std::string* out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (queue_.empty() || gone_) {
    pump_scheduled_ = false;
    return false;
  }
  // Everything queued goes out in one write: under load, events are batched, not one write each.
  // The bytes stay counted until written (written()): the bound covers the write in flight.
  out->clear();
  for (std::string& event : queue_) out->append(event);
  queue_.clear();
  return true;
}

void EventStreamImpl::written(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  queued_bytes_ -= std::min(bytes, queued_bytes_);
}

bool EventStreamImpl::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_ || gone_;
}

void EventStreamImpl::mark_gone() {
  std::lock_guard<std::mutex> lock(mu_);
  gone_ = true;
  queue_.clear();
  queued_bytes_ = 0;
}

ReplyImpl::~ReplyImpl() {
  if (answered_->exchange(true)) return;
  if (auto session = session_.lock()) {
    asio::post(session->executor(), [session] {
      session->write_response(
          HttpResponse::error(500, "internal error: the request was dropped unanswered"));
    });
  }
}

bool ReplyImpl::send(HttpResponse response) {
  if (answered_->exchange(true)) return false;
  std::shared_ptr<asio::steady_timer> timer;
  {
    std::lock_guard<std::mutex> lock(timer_mu_);
    timer = std::move(timer_);
  }
  auto session = session_.lock();
  if (!session) return true;  // the client is gone; the answer has nobody to go to
  asio::post(session->executor(),
             [session, timer = std::move(timer), r = std::move(response)]() mutable {
               if (timer) timer->cancel();
               session->write_response(std::move(r));
             });
  return true;
}

void ReplyImpl::answer_by(double seconds, HttpResponse fallback) {
  auto session = session_.lock();
  if (!session) return;
  auto timer = std::make_shared<asio::steady_timer>(session->executor());
  {
    std::lock_guard<std::mutex> lock(timer_mu_);
    timer_ = timer;
  }
  const auto delay = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::clamp(seconds, 0.0, 1e7)));
  // Armed on the strand, where send() cancels it. The timer holds this Reply: a handler may
  // drop its Reply after answer_by, and the fallback still comes at the deadline.
  asio::post(session->executor(), [timer, delay, self = shared_from_this(),
                                   f = std::move(fallback)]() mutable {
    timer->expires_after(delay);
    timer->async_wait([self, f = std::move(f)](const boost::system::error_code& ec) mutable {
      if (!ec) self->send(std::move(f));
    });
  });
}

std::shared_ptr<EventStream> ReplyImpl::start_events() {
  auto session = session_.lock();
  if (!session || answered_->exchange(true)) return nullptr;
  auto stream = std::make_shared<EventStreamImpl>(session, core_.options.max_stream_buffer_bytes);
  asio::post(session->executor(), [session, stream] { session->start_stream(stream); });
  return stream;
}

void ReplyImpl::run_on_workers(std::function<void()> job) {
  asio::post(*core_.workers, std::move(job));
}

}  // namespace zeus::http::detail
