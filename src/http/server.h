// HttpServer: the event-driven HTTP/1.1 server under every server of the project (`zeus serve`,
// zeusd, and what comes after them). No thread per connection: a few I/O threads run every read,
// write, keep-alive wait, long-poll and event stream asynchronously (Boost.Asio); handlers that
// block (SQLite, PostgreSQL, NVML) run on a bounded worker pool, never on the I/O threads.
//
// A handler gets the request, the peer and a Reply. It answers now or later, from any thread:
//   - blocking(fn): wraps HttpResponse fn(request, peer) to run on the worker pool;
//   - long-poll: keep the Reply, give it a deadline (answer_by), send() when the event happens;
//   - Server-Sent Events: reply->start_events() gives an EventStream; send events to it from any
//     thread. Buffering is bounded: a listener that falls more than max_stream_buffer_bytes
//     behind is dropped (its connection closed), never buffered without end.
//   - a streamed body of raw bytes (a proxy relaying an answer as it arrives):
//     reply->start_body(head) sends the status and headers of the handler's choice and gives a
//     BodyStream; write() pieces from any worker thread (chunked transfer coding; a writer that
//     gets more than max_stream_buffer_bytes ahead of the client waits, up to write_timeout_s),
//     then finish() with optional HTTP trailers. The connection is kept alive after it.
// Limits, all in ServerOptions with safe defaults: header bytes and fields, body bytes, deadlines
// for the headers and for the body (slowloris), an idle keep-alive timeout, connections per peer,
// and a global cap. At the cap, a new connection takes the slot of the longest-idle connection
// (or, failing that, of the slowest request still sending its headers), so idle and slow peers
// cannot lock anyone out; privileged peers (identify() says so: zeusd's root and socket owner)
// have a reserve of extra slots, and requests marked inline (/healthz) skip the worker queue.
// Transports: TCP (IPv4/IPv6) and Unix sockets, whose peer identify() can examine (SO_PEERCRED).
// stop() is graceful: it stops accepting, closes idle connections, lets in-flight requests finish
// (up to shutdown_grace_s) and joins every thread.
// Thread-safety: a Reply and an EventStream may be used from any thread, and kept after their
// connection or the whole server is gone (they then do nothing); start/stop from one thread.
//
//   auto server = HttpServer::start(options, HttpServer::blocking([](auto& req, auto&) {
//     return HttpResponse{200, "{}"}; }));
//   ZEUS_TRY((*server)->listen_tcp("127.0.0.1", 0));
#pragma once

#include <any>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "http/message.h"
#include "zeus/common/result.h"

namespace zeus::http {

enum class Transport { kTcp, kUnix };

// The other end of a connection.
struct Peer {
  Transport transport = Transport::kTcp;
  std::string address;  // "127.0.0.1:40000", "[::1]:40000", or "unix" for a Unix socket
  std::string key;      // what the per-peer cap counts by: the IP address, or "uid <n>"
  bool privileged = false;  // may use the reserve above the global cap
  std::any context;         // what identify() attached (zeusd: its credentials)
};

// Who is on the other end of an accepted socket (native descriptor `fd`): the peer with key and
// privilege filled in, or an error, which refuses the connection with 403 and that message.
using IdentifyFn = std::function<Result<Peer>(int fd, Peer peer)>;

class EventStream {
 public:
  virtual ~EventStream() = default;
  // Queues one event ("event: <name>\n" when name is non-empty, a "data: " line per line of
  // data, then a blank line). False when the listener is gone or was dropped for being slow.
  virtual bool send(std::string_view data, std::string_view name = {}) = 0;
  // Queues a comment line (": <text>", then a blank line), which SSE clients ignore: a keep-alive
  // that lets a quiet stream's listener tell a live server from a dead one. `text` is cut at its
  // first line break. False as for send().
  virtual bool comment(std::string_view text) = 0;
  // Ends the stream (the connection closes once the queued events are written).
  virtual void close() = 0;
  virtual bool open() const = 0;
};

// A streamed answer's body (start_body). HTTP/1.1 clients get it in chunked transfer coding,
// ended by trailers; HTTP/1.0 clients get the bytes as they are, ended by closing the connection
// (no trailers); HEAD requests get none of the bytes.
class BodyStream {
 public:
  virtual ~BodyStream() = default;
  // Queues `bytes` (empty: nothing is sent). Waits while the client is more than
  // max_stream_buffer_bytes behind, up to write_timeout_s, then drops it. False when the client
  // is gone, was dropped, or the body was finished. Never call it on an I/O thread (an inline
  // handler): the wait would hold the connections it waits for.
  virtual bool write(std::string_view bytes) = 0;
  // As write(), never waiting — for a writer on the event loop (a relay driven by an
  // AsyncHttpClient), where a wait would hold the connection it waits for. The bytes are queued
  // however far behind the client is: kQueued; kFull when it is now more than
  // max_stream_buffer_bytes behind: write no more until `on_room` is called (once, from the
  // connection's loop) when it has caught up halfway, or is gone; kGone as write()'s false.
  // A client that stops reading is dropped after write_timeout_s, which also calls on_room.
  enum class Queued { kYes, kFull, kGone };
  virtual Queued write_nowait(std::string_view bytes, std::function<void()> on_room) = 0;
  // Ends the body, with `trailers` (names and values of visible ASCII; others are left out).
  // Never waits (the last chunk is queued however full the buffer is). Only the first call
  // counts; false when the client is gone.
  virtual bool finish(const Headers& trailers = {}) = 0;
  // Ends the body without its end — no last chunk; the connection closes once what is queued is
  // written — so the client sees it cut, not complete (a relay whose source broke off). Only
  // the first finish() or abort() counts.
  virtual void abort() = 0;
  virtual bool open() const = 0;
};

// The status line and headers of a streamed body (start_body). Framing headers in `headers`
// (Content-Length, Transfer-Encoding, Connection, Trailer, Keep-Alive, Upgrade) are left out:
// the server frames the body itself.
struct StreamHead {
  int status = 200;
  std::string content_type = "application/octet-stream";  // empty: no Content-Type
  Headers headers;
  std::vector<std::string> trailer_names;  // announced in "Trailer:" (HTTP/1.1 only)
};

class Reply {
 public:
  virtual ~Reply() = default;
  // Sends the answer. Only the first answer counts; later calls return false.
  virtual bool send(HttpResponse response) = 0;
  // Long-poll: if no answer was sent within `seconds`, `fallback` is sent.
  virtual void answer_by(double seconds, HttpResponse fallback) = 0;
  // Answers 200 text/event-stream and gives the stream to send events on (nullptr when the
  // request was answered already or its connection is gone).
  virtual std::shared_ptr<EventStream> start_events() = 0;
  // Answers with `head` and gives the stream to write the body on (nullptr when the request was
  // answered already or its connection is gone).
  virtual std::shared_ptr<BodyStream> start_body(StreamHead head) = 0;
  virtual bool answered() const = 0;
  // True once the client has hung up or closed its sending side (a long-poll's waiter can
  // forget this Reply; an answer sent anyway is still written if the socket takes it).
  virtual bool client_gone() const = 0;
};

using Handler =
    std::function<void(const HttpRequest& request, const Peer& peer, std::shared_ptr<Reply>)>;
using BlockingFn = std::function<HttpResponse(const HttpRequest& request, const Peer& peer)>;

struct ServerOptions {
  Limits limits;
  int io_threads = 1;          // event loops; 1 keeps a 2-core machine's other core for workers
  int workers = 0;             // blocking handlers; 0: 2 x cores, at least 4
  double header_timeout_s = 10;  // first byte to end of headers (slowloris)
  double body_timeout_s = 30;    // end of headers to end of body
  double idle_timeout_s = 60;    // a keep-alive connection waiting for its next request
  double write_timeout_s = 30;   // a peer that does not read its answer
  size_t max_connections = 10000;  // global cap; clamped at start to the descriptors there are
  size_t privileged_reserve = 64;        // extra slots above the cap for privileged peers
  size_t max_connections_per_peer = 0;   // 0: no per-peer cap
  size_t max_stream_buffer_bytes = 1 << 20;  // per event-stream listener
  double shutdown_grace_s = 5;
  // Requests answered on the I/O thread, ahead of the worker queue (cheap, non-blocking handlers
  // such as /healthz); true for the path: the handler is called inline even for blocking().
  std::function<bool(const HttpRequest&)> inline_request;
  IdentifyFn identify;  // unset: key = IP address (TCP) or "unix", never privileged
  // How the errors the layer answers itself are worded (400, 408, 413, 431 for a bad request,
  // 500 for a handler that threw or dropped its reply, 503 and 403 for a refused connection);
  // unset: HttpResponse::error, {"message": ...}. zeus proxy answers in OpenAI's error shape, which
  // the API's client libraries read.
  std::function<HttpResponse(int status, std::string_view message)> error_answer;
  std::string name = "http";  // in log lines
};

class HttpServer {
 public:
  // Starts the event loops and the worker pool; then listen on one or more sockets.
  static Result<std::unique_ptr<HttpServer>> start(ServerOptions options, Handler handler);
  // Runs `fn` on the worker pool and sends what it returns (a thrown exception answers 500).
  static Handler blocking(BlockingFn fn);
  // Runs `handler` on the worker pool, where it may block while it answers through its Reply
  // (a proxy relaying a streamed answer with start_body); a thrown exception answers 500.
  static Handler on_workers(Handler handler);

  virtual ~HttpServer() = default;
  // Listens on host:port (port 0: any free port); answers the port bound.
  virtual Result<int> listen_tcp(const std::string& host, int port) = 0;
  // Listens on an already bound and listening Unix socket (zeusd creates it safely); takes the
  // descriptor.
  virtual Result<void> listen_unix(int listening_fd) = 0;
  // Stops as described above; idempotent.
  virtual void stop() = 0;

  struct Stats {
    size_t connections = 0;  // open now
    size_t evicted = 0;      // idle or slow connections closed to make room
    size_t refused = 0;      // connections refused at the cap
    size_t timeouts = 0;     // requests or idle waits that ran past their deadline
    size_t max_connections = 0;  // the cap in force (options' max_connections, clamped at start)
  };
  virtual Stats stats() const = 0;
};

}  // namespace zeus::http
