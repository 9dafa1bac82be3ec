#include "http/reply.h"

#include "http/async_client.h"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <algorithm>
#include <chrono>
#include <cctype>
#include <cstdio>

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
  return queue_->push(std::move(event));
}

bool EventStreamImpl::comment(std::string_view text) {
  std::string line(": ");
  line.append(text.substr(0, text.find_first_of("\r\n"))).append("\n\n");
  return queue_->push(std::move(line));
}

namespace {

// A field name is a token (RFC 9110 §5.6.2); a value, visible ASCII, spaces and tabs.
bool field_name_ok(std::string_view name) {
  static constexpr std::string_view kTchar = "!#$%&'*+-.^_`|~";
  if (name.empty()) return false;
  for (const char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && kTchar.find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

bool field_value_ok(std::string_view value) {
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (u != '\t' && (u < 0x20 || u == 0x7f)) return false;
  }
  return true;
}

}  // namespace

std::string chunk_of(std::string_view bytes) {
  char size[24];
  const int n = std::snprintf(size, sizeof(size), "%zx\r\n", bytes.size());
  std::string out;
  out.reserve(bytes.size() + static_cast<size_t>(n) + 2);
  out.append(size, static_cast<size_t>(n)).append(bytes).append("\r\n");
  return out;
}

std::string last_chunk(const Headers& trailers) {
  std::string out = "0\r\n";
  for (const auto& [name, value] : trailers) {
    if (!field_name_ok(name) || !field_value_ok(value)) continue;
    out.append(name).append(": ").append(value).append("\r\n");
  }
  return out.append("\r\n");
}

bool BodyStreamImpl::write(std::string_view bytes) {
  if (finished_.load()) return false;
  if (bytes.empty() || discard_) return queue_->open();
  return queue_->push(chunked_ ? chunk_of(bytes) : std::string(bytes));
}

BodyStream::Queued BodyStreamImpl::write_nowait(std::string_view bytes,
                                                std::function<void()> on_room) {
  if (finished_.load()) return Queued::kGone;
  if (bytes.empty() || discard_) return queue_->open() ? Queued::kYes : Queued::kGone;
  switch (queue_->push_nowait(chunked_ ? chunk_of(bytes) : std::string(bytes),
                              std::move(on_room))) {
    case StreamQueue::Pushed::kQueued: return Queued::kYes;
    case StreamQueue::Pushed::kFull: return Queued::kFull;
    case StreamQueue::Pushed::kGone: break;
  }
  return Queued::kGone;
}

bool BodyStreamImpl::finish(const Headers& trailers) {
  if (finished_.exchange(true)) return false;
  bool ok = queue_->open();
  if (ok && chunked_) {
    ok = queue_->push_nowait(discard_ ? std::string() : last_chunk(trailers), nullptr) !=
         StreamQueue::Pushed::kGone;
  }
  queue_->close();
  return ok;
}

void BodyStreamImpl::abort() {
  if (finished_.exchange(true)) return;
  queue_->close(/*cut=*/true);
}

ReplyImpl::~ReplyImpl() {
  if (answered_->exchange(true)) return;
  if (auto session = session_.lock()) {
    HttpResponse answer =
        core_.error_answer(500, "internal error: the request was dropped unanswered");
    asio::post(session->executor(), [session, answer = std::move(answer)]() mutable {
      session->write_response(std::move(answer));
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
  auto queue = std::make_shared<StreamQueue>(session, core_.options.max_stream_buffer_bytes,
                                             StreamQueue::WhenFull::kDrop, 0);
  StreamStart start;
  start.head.content_type = "text/event-stream";
  start.head.headers = {{"Cache-Control", "no-cache"}};
  start.events = true;
  asio::post(session->executor(),
             [session, queue, start = std::move(start)]() mutable {
               session->start_stream(queue, std::move(start));
             });
  return std::make_shared<EventStreamImpl>(std::move(queue));
}

std::shared_ptr<BodyStream> ReplyImpl::start_body(StreamHead head) {
  auto session = session_.lock();
  if (!session || answered_->exchange(true)) return nullptr;
  auto queue = std::make_shared<StreamQueue>(session, core_.options.max_stream_buffer_bytes,
                                             StreamQueue::WhenFull::kWait,
                                             core_.options.write_timeout_s);
  const bool chunked = request_.version == 11;
  const bool discard = request_.method == "HEAD";
  StreamStart start;
  start.head = std::move(head);
  start.chunked = chunked;
  asio::post(session->executor(),
             [session, queue, start = std::move(start)]() mutable {
               session->start_stream(queue, std::move(start));
             });
  return std::make_shared<BodyStreamImpl>(std::move(queue), chunked, discard);
}

}  // namespace zeus::http::detail

namespace zeus::http {
boost::asio::any_io_executor loop_of(const Reply& reply) {
  return static_cast<const detail::ReplyImpl&>(reply).loop();
}
}  // namespace zeus::http

namespace zeus::http::detail {

boost::asio::any_io_executor ReplyImpl::loop() const {
  if (auto session = session_.lock()) return session->executor();
  return boost::asio::make_strand(core_.io);
}

void ReplyImpl::run_on_workers(std::function<void()> job) {
  asio::post(*core_.workers, std::move(job));
}

}  // namespace zeus::http::detail
