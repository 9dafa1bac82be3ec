// HttpServer (server.h): the event loops, the worker pool, the listeners and admission; the
// connections themselves are session.cc's.
#include "http/server.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <limits>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "http/beast_mapping.h"
#include "http/descriptor_budget.h"
#include "http/reply.h"
#include "http/server_core.h"
#include "zeus/common/log.h"

namespace zeus::http {
namespace detail {

bool ServerCore::admit(const std::shared_ptr<SessionHandle>& session, std::string* why) {
  std::lock_guard<std::mutex> lock(mu);
  if (stopping.load()) {
    *why = options.name + " is shutting down";
    refused.fetch_add(1);
    return false;
  }
  const size_t cap = options.max_connections_per_peer;
  if (cap > 0 && !session->privileged && per_peer[session->peer_key] >= cap) {
    *why = std::to_string(cap) + " connections from " + session->peer_key +
           " are open, the per-peer limit; close some (or reuse one with keep-alive)";
    refused.fetch_add(1);
    return false;
  }
  const size_t limit = options.max_connections + (session->privileged ? options.privileged_reserve : 0);
  if (sessions.size() >= limit && !evict_locked()) {
    *why = options.name + " has " + std::to_string(sessions.size()) +
           " connections busy with requests, its limit; retry shortly";
    refused.fetch_add(1);
    return false;
  }
  sessions.emplace(session->id, session);
  ++per_peer[session->peer_key];
  return true;
}

bool ServerCore::evict_locked() {
  std::shared_ptr<SessionHandle> victim;
  int victim_tier = 2;
  int64_t victim_since = 0;
  for (const auto& [id, s] : sessions) {
    const SessionState state = s->state.load();
    const int tier = state == SessionState::kIdle ? 0 : state == SessionState::kReading ? 1 : 2;
    if (tier == 2) continue;
    const int64_t since = s->since_ns.load();
    if (tier < victim_tier || (tier == victim_tier && since < victim_since)) {
      victim = s;
      victim_tier = tier;
      victim_since = since;
    }
  }
  if (!victim) return false;
  victim->close_now();
  evicted.fetch_add(1);
  if (sessions.erase(victim->id) && --per_peer[victim->peer_key] == 0) {
    per_peer.erase(victim->peer_key);
  }
  return true;
}

bool ServerCore::evict_one() {
  std::lock_guard<std::mutex> lock(mu);
  return evict_locked();
}

void ServerCore::warn_throttled(Noise kind, const std::string& message) {
  const double now_s = static_cast<double>(now_ns()) * 1e-9;
  std::optional<long> n;
  {
    std::lock_guard<std::mutex> lock(mu);
    n = throttles[static_cast<int>(kind)].record(now_s);
  }
  if (!n) return;
  log_warning(*n == 1 ? message
                      : message + " (" + std::to_string(*n) + " times in the last 10 s or more)");
}

void ServerCore::unregister(const SessionHandle& session) {
  std::lock_guard<std::mutex> lock(mu);
  if (sessions.erase(session.id) && --per_peer[session.peer_key] == 0) {
    per_peer.erase(session.peer_key);
  }
}

size_t ServerCore::open_connections() {
  std::lock_guard<std::mutex> lock(mu);
  return sessions.size();
}

HttpResponse ServerCore::error_answer(int status, std::string_view message) const {
  return options.error_answer ? options.error_answer(status, message)
                              : HttpResponse::error(status, message);
}

void refuse_connection(const ServerCore& core, int fd, int status, const std::string& message) {
  BeastResponse response = to_beast(core.error_answer(status, message), 11, false, false);
  std::ostringstream out;
  out << response;
  const std::string bytes = out.str();
  // Best effort and never blocking: a refused peer gets no second chance to read.
  [[maybe_unused]] ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

}  // namespace detail

namespace {

namespace asio = boost::asio;
using boost::system::error_code;

Result<void> check(const ServerOptions& o) {
  auto bad = [](const std::string& m) { return fail(ErrorCode::kInvalidArgument, m); };
  if (o.limits.max_header_bytes < 256) return bad("the header limit must be at least 256 bytes");
  if (o.limits.max_headers < 1) return bad("the header-field limit must be at least 1");
  if (o.limits.max_body_bytes < 1) return bad("the body limit must be at least 1 byte");
  if (o.io_threads < 1 || o.io_threads > 64) return bad("I/O threads must be in 1-64");
  if (o.workers < 0 || o.workers > 1024) return bad("workers must be in 1-1024 (0: automatic)");
  for (double t : {o.header_timeout_s, o.body_timeout_s, o.idle_timeout_s, o.write_timeout_s}) {
    if (!(t > 0 && t < 1e7)) return bad("HTTP timeouts must be above 0 s and below 10^7 s");
  }
  if (o.max_connections < 1) return bad("the connection limit must be at least 1");
  if (o.max_stream_buffer_bytes < 1024) return bad("the event-stream buffer must be >= 1 KiB");
  return ok();
}

// Connections need descriptors: lift the soft limit to the hard one (as servers usually do),
// and answer the limit.
size_t raise_descriptor_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur == RLIM_INFINITY ? std::numeric_limits<int>::max()
                                         : static_cast<size_t>(limit.rlim_cur);
}

size_t descriptors_in_use() {
  std::error_code ec;
  size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return ec || n == 0 ? 64 : n;
}

// Descriptors promised to the servers of this process that are running.
std::atomic<size_t> g_promised_descriptors{0};

// Clamps the options' connection cap to the descriptors there are (descriptor_budget.h), saying
// so once; answers the descriptors promised to this server.
size_t fit_to_descriptors(ServerOptions* options) {
  const size_t limit = raise_descriptor_limit();
  const detail::ConnectionBudget budget =
      detail::connection_budget(limit, descriptors_in_use() + g_promised_descriptors.load(),
                                options->max_connections, options->privileged_reserve);
  if (budget.clamped) {
    log_warning(options->name + ": the descriptor limit (ulimit -n " + std::to_string(limit) +
                ") allows " + std::to_string(budget.max_connections) + " connections (+" +
                std::to_string(budget.privileged_reserve) + " for privileged peers), not the " +
                std::to_string(options->max_connections) +
                " asked for: idle and slow connections still make room for new ones; for more, "
                "raise the hard limit (ulimit -Hn, systemd LimitNOFILE=, docker --ulimit nofile=)");
  }
  options->max_connections = budget.max_connections;
  options->privileged_reserve = budget.privileged_reserve;
  const size_t promised = budget.max_connections + budget.privileged_reserve;
  g_promised_descriptors.fetch_add(promised);
  return promised;
}

bool out_of_descriptors(const error_code& ec) {
  return ec == asio::error::no_descriptors ||
         ec == error_code(ENFILE, boost::system::system_category()) ||
         ec == error_code(ENOBUFS, boost::system::system_category()) ||
         ec == error_code(ENOMEM, boost::system::system_category());
}

class HttpServerImpl final : public HttpServer {
 public:
  HttpServerImpl(ServerOptions options, Handler handler, size_t promised_descriptors)
      : core_(std::make_unique<detail::ServerCore>(std::move(options), std::move(handler))),
        guard_(asio::make_work_guard(core_->io)),
        promised_descriptors_(promised_descriptors),
        spare_fd_(::open("/dev/null", O_RDONLY | O_CLOEXEC)) {
    int workers = core_->options.workers;
    if (workers == 0) workers = std::max(4, 2 * static_cast<int>(std::thread::hardware_concurrency()));
    core_->workers = std::make_unique<asio::thread_pool>(workers);
    for (int i = 0; i < core_->options.io_threads; ++i) {
      io_threads_.emplace_back([this] { core_->io.run(); });
    }
  }
  ~HttpServerImpl() override {
    stop();
    g_promised_descriptors.fetch_sub(promised_descriptors_);
    if (spare_fd_ >= 0) ::close(spare_fd_);
  }

  Result<int> listen_tcp(const std::string& host, int port) override {
    if (port < 0 || port > 65535) {
      return fail(ErrorCode::kInvalidArgument, "port must be in 0-65535 (0: any free port)");
    }
    error_code ec;
    asio::ip::tcp::resolver resolver(core_->io);
    auto endpoints = resolver.resolve(host, std::to_string(port), asio::ip::tcp::resolver::passive, ec);
    if (ec || endpoints.empty()) {
      return fail(ErrorCode::kInvalidArgument, "cannot use the address '" + host + "': " +
                                                   ec.message() + "; give an IP address or host name");
    }
    auto acceptor = std::make_shared<asio::ip::tcp::acceptor>(core_->io);
    const auto endpoint = endpoints.begin()->endpoint();
    acceptor->open(endpoint.protocol(), ec);
    if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor->bind(endpoint, ec);
    if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return fail(ErrorCode::kUnavailable,
                  "cannot listen on " + host + ":" + std::to_string(port) + " (" + ec.message() +
                      "); pick another address or port, or port 0 for any free port");
    }
    const int bound = acceptor->local_endpoint().port();
    {
      std::lock_guard<std::mutex> lock(mu_);
      closers_.push_back([acceptor] {
        error_code ignored;
        acceptor->close(ignored);
      });
    }
    asio::post(core_->io, [this, acceptor] { accept(acceptor); });
    return bound;
  }

  Result<void> listen_unix(int listening_fd) override {
    auto acceptor = std::make_shared<asio::local::stream_protocol::acceptor>(core_->io);
    error_code ec;
    acceptor->assign(asio::local::stream_protocol(), listening_fd, ec);
    if (ec) return fail(ErrorCode::kInvalidArgument, "cannot serve the Unix socket: " + ec.message());
    {
      std::lock_guard<std::mutex> lock(mu_);
      closers_.push_back([acceptor] {
        error_code ignored;
        acceptor->close(ignored);
      });
    }
    asio::post(core_->io, [this, acceptor] { accept(acceptor); });
    return ok();
  }

  void stop() override {
    if (stopped_.exchange(true)) return;
    core_->stopping.store(true);
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& close : closers_) asio::post(core_->io, close);
    }
    for (auto& s : snapshot()) s->close_when_idle();
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration<double>(core_->options.shutdown_grace_s);
    while (core_->open_connections() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (auto& s : snapshot()) s->close_now();
    core_->workers->join();
    guard_.reset();
    // Let the closes run, then stop the loops.
    const auto close_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (core_->open_connections() > 0 && std::chrono::steady_clock::now() < close_deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    core_->io.stop();
    for (auto& t : io_threads_) t.join();
    io_threads_.clear();
    std::lock_guard<std::mutex> lock(core_->mu);
    core_->sessions.clear();  // before the event loop (and the sockets' services) goes
    core_->per_peer.clear();
  }

  Stats stats() const override {
    Stats s;
    s.connections = core_->open_connections();
    s.evicted = core_->evicted.load();
    s.refused = core_->refused.load();
    s.timeouts = core_->timeouts.load();
    s.max_connections = core_->options.max_connections;
    return s;
  }

 private:
  std::vector<std::shared_ptr<detail::SessionHandle>> snapshot() {
    std::lock_guard<std::mutex> lock(core_->mu);
    std::vector<std::shared_ptr<detail::SessionHandle>> all;
    all.reserve(core_->sessions.size());
    for (const auto& [id, s] : core_->sessions) all.push_back(s);
    return all;
  }

  template <class Acceptor>
  void accept(std::shared_ptr<Acceptor> acceptor) {
    acceptor->async_accept(asio::make_strand(core_->io), [this, acceptor](const error_code& ec,
                                                                          auto socket) {
      if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
      if (ec) {
        auto pause = std::chrono::milliseconds(50);
        if (out_of_descriptors(ec)) {
          // As at the cap: the longest-idle (or slowest) connection makes room. When every
          // connection is busy, the waiting peer is told so (503) instead of hanging unanswered.
          core_->warn_throttled(detail::ServerCore::Noise::kAcceptFailed,
                                core_->options.name + ": out of descriptors at accept (" +
                                    ec.message() + "); closing idle connections to make room");
          if (core_->evict_one()) {
            pause = std::chrono::milliseconds(1);  // the close runs first, then accept again
          } else {
            refuse_with_spare_descriptor(acceptor->native_handle());
          }
        } else {
          core_->warn_throttled(detail::ServerCore::Noise::kAcceptFailed,
                                core_->options.name + ": accept failed: " + ec.message());
        }
        auto timer = std::make_shared<asio::steady_timer>(core_->io, pause);
        timer->async_wait([this, acceptor, timer](const error_code&) { accept(acceptor); });
        return;
      }
      serve(std::move(socket));
      accept(acceptor);
    });
  }

  // Out of descriptors with nothing to evict: the one kept open for this takes the waiting
  // connection long enough to answer it 503, so it is not left hanging in the backlog.
  void refuse_with_spare_descriptor(int listening_fd) {
    std::lock_guard<std::mutex> lock(mu_);
    if (spare_fd_ < 0) return;
    ::close(spare_fd_);
    const int fd = ::accept4(listening_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      detail::refuse_connection(*core_, fd, 503, core_->options.name +
                                             " is out of file descriptors, every connection is "
                                             "busy with a request; retry shortly");
      core_->refused.fetch_add(1);
      ::close(fd);
    }
    spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }

  template <class Socket>
  void serve(Socket socket) {
    Peer peer;
    error_code ec;
    const auto remote = socket.remote_endpoint(ec);
    if constexpr (std::is_same_v<typename Socket::protocol_type, asio::ip::tcp>) {
      peer.transport = Transport::kTcp;
      peer.key = ec ? "?" : remote.address().to_string();
      peer.address = remote.address().is_v6() ? "[" + peer.key + "]:" : peer.key + ":";
      peer.address += ec ? "?" : std::to_string(remote.port());
      socket.set_option(asio::ip::tcp::no_delay(true), ec);
    } else {
      peer.transport = Transport::kUnix;
      peer.key = "unix";
      peer.address = "unix";
    }
    if (core_->options.identify) {
      Result<Peer> identified = core_->options.identify(socket.native_handle(), std::move(peer));
      if (!identified) {
        core_->warn_throttled(detail::ServerCore::Noise::kRefused,
                              core_->options.name + ": refused a connection: " +
                                  identified.error().message);
        detail::refuse_connection(*core_, socket.native_handle(), 403,
                                  identified.error().message);
        core_->refused.fetch_add(1);
        return;  // the socket closes here
      }
      peer = std::move(*identified);
    }
    detail::start_session(*core_, std::move(socket), std::move(peer));
  }

  std::unique_ptr<detail::ServerCore> core_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::vector<std::thread> io_threads_;
  std::mutex mu_;  // guards closers_ and spare_fd_
  std::vector<std::function<void()>> closers_;
  std::atomic<bool> stopped_{false};
  size_t promised_descriptors_ = 0;
  int spare_fd_ = -1;
};

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::start(ServerOptions options, Handler handler) {
  ZEUS_TRY(check(options));
  if (!handler) return fail(ErrorCode::kInvalidArgument, "the HTTP server needs a handler");
  const size_t promised = fit_to_descriptors(&options);
  return std::unique_ptr<HttpServer>(
      std::make_unique<HttpServerImpl>(std::move(options), std::move(handler), promised));
}

Handler HttpServer::blocking(BlockingFn fn) {
  auto shared = std::make_shared<BlockingFn>(std::move(fn));
  return [shared](const HttpRequest&, const Peer&, std::shared_ptr<Reply> reply) {
    auto& impl = static_cast<detail::ReplyImpl&>(*reply);
    auto job = [shared, reply = std::move(reply)] {
      auto& r = static_cast<detail::ReplyImpl&>(*reply);
      try {
        reply->send((*shared)(r.request(), r.peer()));
      } catch (const std::exception& e) {
        log_error("http: handler failed: " + std::string(e.what()));
        reply->send(r.error_answer(500, std::string("internal error: ") + e.what()));
      }
    };
    if (impl.inline_request()) {
      job();
    } else {
      impl.run_on_workers(std::move(job));
    }
  };
}

Handler HttpServer::on_workers(Handler handler) {
  auto shared = std::make_shared<Handler>(std::move(handler));
  return [shared](const HttpRequest&, const Peer&, std::shared_ptr<Reply> reply) {
    auto& impl = static_cast<detail::ReplyImpl&>(*reply);
    auto job = [shared, reply = std::move(reply)]() mutable {
      auto& r = static_cast<detail::ReplyImpl&>(*reply);
      try {
        (*shared)(r.request(), r.peer(), reply);
      } catch (const std::exception& e) {
        log_error("http: handler failed: " + std::string(e.what()));
        reply->send(r.error_answer(500, std::string("internal error: ") + e.what()));
      }
    };
    // ServerOptions::inline_request holds here as in blocking(): such a request never waits
    // for a worker that every other request may be holding.
    if (impl.inline_request()) {
      job();
    } else {
      impl.run_on_workers(std::move(job));
    }
  };
}

}  // namespace zeus::http
