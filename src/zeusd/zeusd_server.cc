#include "zeusd/zeusd_server.h"

#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zeus/common/log.h"
#include "zeusd/peer_credentials.h"

namespace zeus::zeusd {
namespace {

struct LoopbackAddress {
  std::string host;
  int port = 0;
};

// The uid a remote TCP peer is served as (it has none on this machine; its token decides).
constexpr uint32_t kNobody = 65534;

// "127.0.0.1:PORT" -> its parts; without tokens zeusd serves loopback only (TCP peers are then
// identified through this machine's socket table).
Result<LoopbackAddress> loopback_address(const std::string& text, bool any_address) {
  const size_t colon = text.rfind(':');
  const std::string host = colon == std::string::npos ? "" : text.substr(0, colon);
  const std::string port_text = colon == std::string::npos ? "" : text.substr(colon + 1);
  in_addr address{};
  if (host.empty() || port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string::npos ||
      inet_pton(AF_INET, host.c_str(), &address) != 1 || std::stoi(port_text) > 65535) {
    return fail(ErrorCode::kInvalidArgument,
                "--tcp-bind-address '" + text + "' is not IPv4:PORT, e.g. 127.0.0.1:4938");
  }
  if (!any_address && (ntohl(address.s_addr) >> 24) != 127) {
    return fail(ErrorCode::kInvalidArgument,
                "--tcp-bind-address '" + text +
                    "' is not a loopback address: without tokens zeusd identifies TCP peers "
                    "through this machine's socket table, so it serves 127.x only (fix: "
                    "--signing-key-path, so that tokens identify callers)");
  }
  return LoopbackAddress{host, std::stoi(port_text)};
}

}  // namespace

Result<std::unique_ptr<ZeusdServer>> ZeusdServer::start(const ServerOptions& options,
                                                        RequestHandler handler,
                                                        StreamHandler stream) {
  if (options.socket_path.empty() && options.tcp_address.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "zeusd needs a --socket-path or a --tcp-bind-address (--mode uds|tcp|both)");
  }
  std::optional<LoopbackAddress> tcp;
  if (!options.tcp_address.empty()) {
    Result<LoopbackAddress> address =
        loopback_address(options.tcp_address, options.tcp_any_address);
    if (!address) return fail(address.error());
    tcp = *address;
  }
  std::unique_ptr<ZeusdServer> server(new ZeusdServer(options));
  const uint32_t owner = options.socket_owner_uid.value_or(geteuid());

  http::ServerOptions o;
  o.name = "zeusd";
  o.limits = options.limits;
  o.header_timeout_s = options.request_timeout_s;
  o.body_timeout_s = options.request_timeout_s;
  o.idle_timeout_s = options.idle_timeout_s;
  o.max_connections = options.max_connections;
  o.max_connections_per_peer = options.max_connections_per_user;
  // Reads of the GPUs and of the lease table are answered on the I/O thread, ahead of the worker
  // queue: no number of changes waiting for a slow GPU command can hold them up (they take the
  // table lock only, which no command holds: gpu_locks.h).
  o.inline_request = [](const HttpRequest& q) {
    return q.method == "GET" &&
           (q.path == "/discover" || q.path == "/leases" ||
            (q.path.rfind("/gpu/", 0) == 0 && q.path != "/gpu/stream_power"));
  };
  // The kernel says who the peer is; root and the socket's owner are privileged (a reserve above
  // the cap, no per-user limit).
  o.identify = [owner, remote = options.tcp_any_address](int fd,
                                                         http::Peer peer) -> Result<http::Peer> {
    Result<Peer> who = peer.transport == http::Transport::kUnix ? unix_peer(fd) : tcp_peer(fd);
    if (!who && remote && peer.transport != http::Transport::kUnix &&
        who.error().code == ErrorCode::kNotFound) {
      // Another machine: no uid here; its bearer token decides what it may do.
      Peer stranger;
      stranger.uid = kNobody;
      stranger.gid = kNobody;
      stranger.unix_socket = false;
      peer.key = "address " + peer.address.substr(0, peer.address.rfind(':'));
      peer.privileged = false;
      peer.context = stranger;
      return peer;
    }
    if (!who) return fail(who.error());
    peer.key = "uid " + std::to_string(who->uid);
    peer.privileged = who->uid == 0 || who->uid == owner;
    peer.context = *who;
    return peer;
  };
  auto http = http::HttpServer::start(
      std::move(o),
      http::HttpServer::on_workers([handler = std::move(handler), stream = std::move(stream)](
                                       const HttpRequest& request, const http::Peer& peer,
                                       std::shared_ptr<http::Reply> reply) {
        const Peer& who = std::any_cast<const Peer&>(peer.context);
        if (stream && stream(request, who, reply)) return;
        reply->send(handler(request, who));
      }));
  if (!http) return fail(http.error());
  server->http_ = std::move(*http);

  if (!options.socket_path.empty()) {
    auto bound = bind_unix_socket(
        {options.socket_path, options.socket_owner_uid, options.socket_group_gid,
         static_cast<mode_t>(options.socket_mode), options.allow_unsafe_socket_dir});
    if (!bound) return fail(bound.error());
    server->socket_ = *bound;
    Result<void> served = server->http_->listen_unix(bound->fd);
    if (!served) return fail(served.error());
  }
  if (tcp) {
    Result<int> port = server->http_->listen_tcp(tcp->host, tcp->port);
    if (!port) {
      return fail(ErrorCode::kUnavailable,
                  "cannot listen on " + options.tcp_address + ": " + port.error().message);
    }
    server->tcp_port_ = *port;
  }
  return server;
}

ZeusdServer::~ZeusdServer() { stop(); }

void ZeusdServer::stop() {
  if (http_) http_->stop();
  if (socket_) {
    struct stat info {};
    if (!remove_unix_socket(options_.socket_path, *socket_) &&
        lstat(options_.socket_path.c_str(), &info) == 0) {
      log_warning("zeusd: left " + options_.socket_path +
                  " in place: it is no longer the socket zeusd created (something replaced it, "
                  "or its directory was moved)");
    }
    socket_.reset();
  }
}

}  // namespace zeus::zeusd
