#include "http/stream_queue.h"

#include <boost/asio/post.hpp>

#include <algorithm>
#include <chrono>

namespace zeus::http::detail {

bool StreamQueue::push(std::string bytes) {
  std::function<void()> on_room;  // a push_nowait producer's, woken when this one drops the listener
  std::unique_lock<std::mutex> lock(mu_);
  if (closed_ || gone_) return false;
  // A piece larger than the whole bound waits for an empty queue rather than forever.
  const auto fits = [&] {
    return gone_ || queued_bytes_ == 0 || queued_bytes_ + bytes.size() <= max_bytes_;
  };
  if (!fits()) {
    if (when_full_ == WhenFull::kDrop ||
        !room_.wait_for(lock, std::chrono::duration<double>(std::clamp(wait_s_, 0.0, 1e7)), fits)) {
      on_room = drop_locked();
      lock.unlock();
      if (on_room) on_room();
      return false;
    }
    if (gone_) return false;
  }
  queued_bytes_ += bytes.size();
  queue_.push_back(std::move(bytes));
  schedule_pump_locked();
  return true;
}

StreamQueue::Pushed StreamQueue::push_nowait(std::string bytes, std::function<void()> on_room) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_ || gone_) return Pushed::kGone;
  queued_bytes_ += bytes.size();
  queue_.push_back(std::move(bytes));
  schedule_pump_locked();
  if (queued_bytes_ <= max_bytes_) return Pushed::kQueued;
  on_room_ = std::move(on_room);
  return Pushed::kFull;
}

std::function<void()> StreamQueue::gone_locked() {
  gone_ = true;
  queue_.clear();
  queued_bytes_ = 0;
  room_.notify_all();
  std::function<void()> on_room;
  on_room.swap(on_room_);
  return on_room;
}

std::function<void()> StreamQueue::drop_locked() {
  std::function<void()> on_room = gone_locked();  // a slow listener is dropped, not buffered
  if (auto s = session_.lock()) s->close_now();
  return on_room;
}

void StreamQueue::close(bool cut) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  closed_ = true;
  cut_ = cut;
  schedule_pump_locked();
}

bool StreamQueue::open() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !closed_ && !gone_;
}

void StreamQueue::schedule_pump_locked() {
  if (pump_scheduled_) return;
  auto session = session_.lock();
  if (!session) return;
  pump_scheduled_ = true;
  boost::asio::post(session->executor(), [weak = session_] {
    if (auto s = weak.lock()) s->pump_stream();
  });
}

StreamQueue::Take StreamQueue::take(std::string* out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (queue_.empty() || gone_) {
    pump_scheduled_ = false;
    return gone_ || closed_ ? Take::kEnd : Take::kWait;
  }
  // Everything queued goes out in one write: under load, pieces are batched, not one write each.
  // The bytes stay counted until written (written()): the bound covers the write in flight.
  out->clear();
  for (std::string& piece : queue_) out->append(piece);
  queue_.clear();
  return Take::kBytes;
}

void StreamQueue::written(size_t bytes) {
  std::function<void()> on_room;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queued_bytes_ -= std::min(bytes, queued_bytes_);
    room_.notify_all();
    if (on_room_ && queued_bytes_ <= max_bytes_ / 2) on_room.swap(on_room_);
  }
  if (on_room) on_room();
}

bool StreamQueue::cut() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cut_;
}

bool StreamQueue::gone() const {
  std::lock_guard<std::mutex> lock(mu_);
  return gone_;
}

void StreamQueue::mark_gone() {
  std::function<void()> on_room;
  {
    std::lock_guard<std::mutex> lock(mu_);
    on_room = gone_locked();
  }
  if (on_room) on_room();
}

}  // namespace zeus::http::detail
