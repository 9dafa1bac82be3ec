// AsyncHttpClient: the HTTP/1.1 client for a relay that runs on an HttpServer's event loop (`zeus
// proxy`): an exchange is started from a handler on the I/O thread and driven by completion
// handlers on that same loop, so a request relayed from a server's connection to an upstream and
// back never waits on a worker thread or crosses between threads. Same wire behaviour as
// HttpClient (client.h): the request built the same way, keep-alive connections pooled and checked
// before reuse, HTTPS with the certificate and host verified, answers whose framing a server
// would refuse turned into errors, one deadline (ClientOptions::timeout_s) from the start to the
// answer's head and `idle_timeout_s` between two pieces of its body.
//
// Flow control: on_data answers kPause when the relay's own client is behind; the exchange then
// reads nothing more from the upstream until resume(), so nothing is buffered without bound.
// Thread-safety: start() and resume() from any thread; the handlers run one at a time, in order,
// on the executor given to start(), which must itself run one handler at a time: a connection's
// strand (loop_of(reply): the relay then shares its client connection's strand, so a request
// stays on one thread however many the server runs) or a loop with one thread. The client may be
// shared by many exchanges at once; call close_idle() once the loop has stopped (pooled
// connections belong to it).
// Failure: on_done gets kUnavailable naming the server and what failed, as HttpClient does.
//
//   auto client = AsyncHttpClient::for_scheme("http", "127.0.0.1", 8000, {});
//   (*client)->start(loop_of(*reply), "POST", "/v1/completions", body, {}, std::move(handlers), 600);
#pragma once

#include <boost/asio/any_io_executor.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "http/client.h"
#include "http/message.h"
#include "http/server.h"
#include "zeus/common/result.h"

namespace zeus::http {

// What an exchange does after a piece of the body: read on, wait for resume(), or stop (the
// connection is then closed, never reused in the middle of an answer).
enum class Flow { kMore, kPause, kStop };

struct ExchangeHandlers {
  // The answer's status, content type and headers (body empty), before any body piece; false
  // stops there (unset: read on).
  std::function<bool(const HttpResponse& head)> on_head;
  std::function<Flow(std::string_view piece)> on_data;  // the body, transfer coding removed
  // Last and once: the head with body_complete (the body was read to its end) and close, or the
  // failure; a failure after the head means the body broke off.
  std::function<void(Result<HttpResponse> end)> on_done;
};

class Exchange {
 public:
  virtual ~Exchange() = default;
  // Reads on after on_data answered kPause (a resume before that pause cancels it).
  virtual void resume() = 0;
};

class AsyncHttpClient {
 public:
  // "http" or "https" (options.ca_file, when empty, from ZEUS_CA_FILE), as HttpClient::for_scheme.
  static Result<std::shared_ptr<AsyncHttpClient>> for_scheme(std::string_view scheme,
                                                             std::string host, int port,
                                                             ClientOptions options);
  virtual ~AsyncHttpClient() = default;
  // Starts one exchange on `loop` (loop_of(reply) for a relay); its handlers run there, never
  // inside start().
  virtual std::shared_ptr<Exchange> start(const boost::asio::any_io_executor& loop,
                                          std::string_view method, std::string_view target,
                                          std::string_view body, const Headers& headers,
                                          ExchangeHandlers handlers, double idle_timeout_s) = 0;
  // Closes the pooled idle connections (before their loop is destroyed).
  virtual void close_idle() = 0;
  virtual std::string where() const = 0;  // "http://host:port", for messages
};

// The strand of the connection of `reply` (an HttpServer's Reply) on the server's event loop,
// to start exchanges on from its handler (a new strand of that loop once the connection is gone).
boost::asio::any_io_executor loop_of(const Reply& reply);

}  // namespace zeus::http
