// The state an HttpServer shares with its connections (internal to src/http): options, handler,
// the event loop and worker pool, and the registry of open connections that admission (global
// and per-peer caps, eviction of idle and slow connections) and graceful shutdown work on.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/thread_pool.hpp>

#include "http/server.h"
#include "monitor/warning_throttle.h"

namespace zeus::http::detail {

enum class SessionState : int { kIdle, kReading, kHandling, kWriting, kStreaming, kClosed };

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class StreamQueue;

// How a streamed answer starts (SessionHandle::start_stream).
struct StreamStart {
  StreamHead head;
  bool events = false;   // an event stream: stop() ends it; the connection ends with it
  bool chunked = false;  // chunked transfer coding (HTTP/1.1 bodies), kept-alive after it
};

// What the registry and a Reply see of a connection. The methods without "from any thread" run
// on the connection's strand (post to executor()).
class SessionHandle {
 public:
  virtual ~SessionHandle() = default;
  virtual void close_now() = 0;         // from any thread
  virtual void close_when_idle() = 0;   // from any thread; stop(): close unless in flight
  virtual boost::asio::any_io_executor executor() = 0;
  virtual void write_response(HttpResponse response) = 0;
  virtual void start_stream(std::shared_ptr<StreamQueue> stream, StreamStart start) = 0;
  virtual void pump_stream() = 0;  // writes queued bytes
  std::atomic<SessionState> state{SessionState::kIdle};
  std::atomic<int64_t> since_ns{0};  // when the state began
  std::atomic<bool> peer_finished{false};  // the peer closed (at least its sending side)
  uint64_t id = 0;
  std::string peer_key;
  bool privileged = false;
};

struct ServerCore {
  ServerCore(ServerOptions o, Handler h) : options(std::move(o)), handler(std::move(h)) {}

  // Admits a new connection of `peer`: registers `session` (true), after evicting a victim when
  // at the cap, or refuses it (false, with *why).
  bool admit(const std::shared_ptr<SessionHandle>& session, std::string* why);
  void unregister(const SessionHandle& session);
  size_t open_connections();
  // Closes the longest-idle connection (else the one slowest to send its request) to free its
  // descriptor; false when every connection is busy with a request.
  bool evict_one();
  bool evict_locked();  // evict_one with mu held
  // Logs `message` as a warning at most once per 10 s per `kind`, with the count in between.
  enum class Noise { kAcceptFailed, kRefused, kCount };
  void warn_throttled(Noise kind, const std::string& message);
  // An error the layer answers itself, worded by options.error_answer when set.
  HttpResponse error_answer(int status, std::string_view message) const;

  ServerOptions options;
  Handler handler;
  std::atomic<bool> stopping{false};
  std::atomic<size_t> evicted{0}, refused{0}, timeouts{0};
  // Bytes of request bodies being received (Limits::max_total_body_bytes), reserved by sessions.
  std::atomic<size_t> body_bytes_reserved{0};
  size_t total_body_budget() const {
    const size_t given = options.limits.max_total_body_bytes;
    return given > 0 ? given : std::max<size_t>(size_t{256} << 20, 4 * options.limits.max_body_bytes);
  }
  std::atomic<uint64_t> next_id{1};

  std::mutex mu;  // guards the two maps and the throttles
  WarningThrottle throttles[static_cast<int>(Noise::kCount)] = {WarningThrottle(10.0),
                                                                WarningThrottle(10.0)};
  std::unordered_map<uint64_t, std::shared_ptr<SessionHandle>> sessions;
  std::unordered_map<std::string, size_t> per_peer;

  // Declared after the registry: destroyed first, so connections still queued in them can
  // unregister while they are destroyed.
  boost::asio::io_context io;
  std::unique_ptr<boost::asio::thread_pool> workers;
};

// Serves an accepted connection, TCP or Unix socket (either converts to the generic stream
// socket, the descriptor unchanged) (session.cc); the socket's executor is its strand. Admission
// (ServerCore::admit) is done inside: a refused connection gets 503 and is closed.
void start_session(ServerCore& core, boost::asio::generic::stream_protocol::socket socket,
                   Peer peer);

// Writes a short answer on a connection being refused, without waiting, and closes it.
void refuse_connection(const ServerCore& core, int fd, int status, const std::string& message);

}  // namespace zeus::http::detail
