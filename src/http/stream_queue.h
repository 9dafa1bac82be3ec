// The bytes of a streamed answer on their way from the application's threads to a connection
// (internal to src/http): producers push() from any thread, the connection's strand take()s
// everything queued and reports it written(). Buffering is bounded by max_bytes, counting the
// write in flight: when a push would exceed it, the listener is dropped (kDrop: event streams,
// where a slow listener must not hold the producer) or the producer waits until the connection
// has written enough, up to wait_s, then the listener is dropped (kWait: streamed bodies, where
// every byte matters and the producer is a worker thread). push_nowait() never waits: a producer
// on the event loop (a relay) queues its bytes and, told the queue is full, stops producing until
// its callback says there is room again.
// Thread-safety: every method may be called from any thread; never wait (kWait) on an I/O thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "http/server_core.h"

namespace zeus::http::detail {

class StreamQueue {
 public:
  enum class WhenFull { kDrop, kWait };

  StreamQueue(std::weak_ptr<SessionHandle> session, size_t max_bytes, WhenFull when_full,
              double wait_s)
      : session_(std::move(session)),
        max_bytes_(max_bytes),
        when_full_(when_full),
        wait_s_(wait_s) {}

  // Queues `bytes` for the connection. False when the listener is gone, the stream was closed,
  // or the buffer stayed full (the listener is then dropped and its connection closed).
  bool push(std::string bytes);
  // Queues `bytes` without waiting, however full the queue: kQueued; kFull when it now holds
  // more than max_bytes (then `on_room` is called once, from the connection's strand, when it is
  // down to half of that, or when the listener goes; no call when on_room is empty); kGone when
  // the listener is gone or the stream closed (nothing queued).
  enum class Pushed { kQueued, kFull, kGone };
  Pushed push_nowait(std::string bytes, std::function<void()> on_room);
  // Ends the stream once what is queued is written; `cut`: the body is incomplete, so the
  // connection closes after it (never reused for another request).
  void close(bool cut = false);
  bool open() const;

  // On the connection's strand: every queued piece, concatenated (kBytes); else whether the
  // stream has ended (kEnd: closed with nothing left queued, or gone) or waits for more (kWait).
  // One decision under one lock: a stream checked for bytes and then, apart, for being closed
  // could be closed by a producer in between, after it pushed the rest, which would then be lost.
  enum class Take { kBytes, kWait, kEnd };
  Take take(std::string* out);
  void written(size_t bytes);  // what take() gave has been written
  bool gone() const;           // the listener was dropped or went away
  bool cut() const;            // closed with cut = true
  void mark_gone();            // the listener went away or the connection failed

 private:
  void schedule_pump_locked();
  std::function<void()> drop_locked();  // answers the room callback to call, unlocked
  std::function<void()> gone_locked();

  // Weak: a stream kept by the application after its connection, or the whole server, is gone
  // must not keep the connection's socket and strand alive.
  std::weak_ptr<SessionHandle> session_;
  const size_t max_bytes_;
  const WhenFull when_full_;
  const double wait_s_;
  mutable std::mutex mu_;
  std::condition_variable room_;
  std::deque<std::string> queue_;
  size_t queued_bytes_ = 0;
  bool closed_ = false;
  bool gone_ = false;
  bool cut_ = false;
  bool pump_scheduled_ = false;
  std::function<void()> on_room_;  // push_nowait's, while the queue is over max_bytes
};

}  // namespace zeus::http::detail
