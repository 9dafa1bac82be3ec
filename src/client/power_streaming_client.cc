// PowerStreamingClient (zeus/client/power_streaming_client.h): a thread per node and device kind,
// each
// holding one event stream on the project's HTTP client; the events' decoding and the energy
// integration are power_events.h's.
#include "zeus/client/power_streaming_client.h"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "client/power_events.h"
#include "common/median.h"
#include "http/client.h"
#include "zeus/common/log.h"

namespace zeus {
namespace {

double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string device_key(bool gpu, int id) { return (gpu ? "gpu" : "cpu") + std::to_string(id); }
std::string dram_key(int id) { return "dram" + std::to_string(id); }

std::string id_list(const std::vector<int>& ids) {
  std::string out;
  for (int id : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
  return out;
}

Result<std::unique_ptr<http::HttpClient>> open_client(const StreamAddress& address,
                                                      double timeout_s) {
  http::ClientOptions options;
  options.timeout_s = timeout_s;
  options.max_idle_connections = 2;
  if (!address.socket_path.empty())
    return http::HttpClient::unix_socket(address.socket_path, options);
  return http::HttpClient::tcp(address.host, address.port, options);
}

// The daemon's clock offset: the median over `samples` GET /time round trips of the client's
// midpoint minus the daemon's time.
http::Headers auth_headers(const std::string& token) {
  if (token.empty()) return {};
  return {{"Authorization", "Bearer " + token}};
}

Result<double> estimate_offset(http::HttpClient& client, int samples, const std::string& token) {
  std::vector<double> offsets;
  for (int i = 0; i < std::max(1, samples); ++i) {
    const double before = unix_now_s();
    auto response = client.request("GET", "/time", {}, auth_headers(token));
    const double after = unix_now_s();
    if (!response) return fail(response.error());
    const auto json = nlohmann::json::parse(response->body, nullptr, false);
    if (response->status != 200 || json.is_discarded() || !json.is_object() ||
        !json.contains("timestamp_ms") || !json["timestamp_ms"].is_number()) {
      return fail(ErrorCode::kUnavailable, client.where() + " GET /time answered " +
                                               std::to_string(response->status) +
                                               " without a timestamp_ms (is it a zeusd?)");
    }
    offsets.push_back((before + after) / 2 - json["timestamp_ms"].get<double>() / 1000.0);
  }
  return median(offsets);
}

class StreamingClient final : public PowerStreamingClient {
 public:
  StreamingClient(std::vector<PowerStreamTarget> targets, std::vector<StreamAddress> addresses,
                  std::vector<double> offsets, PowerStreamingOptions options)
      : options_(std::move(options)) {
    for (size_t i = 0; i < targets.size(); ++i) {
      auto node = std::make_unique<Node>();
      node->target = std::move(targets[i]);
      node->address = addresses[i];
      node->offset_s = offsets[i];
      // Unreachable at start (NaN offset): down, and retried like a node that went down.
      if (std::isnan(node->offset_s)) node->error = "not reachable at start; retrying";
      nodes_.push_back(std::move(node));
    }
    for (auto& node : nodes_) {
      for (bool gpu : {true, false}) {
        const auto& ids = gpu ? node->target.gpu_ids : node->target.cpu_ids;
        if (ids && ids->empty()) continue;  // opted out
        node->streams += 1;
        threads_.emplace_back([this, n = node.get(), gpu] { run(*n, gpu); });
      }
    }
  }
  ~StreamingClient() override { stop(); }

  ClusterPower power() const override {
    std::lock_guard<std::mutex> lock(mu_);
    ClusterPower cluster;
    cluster.timestamp_s = unix_now_s();
    for (const auto& node : nodes_) {
      NodePower out;
      out.endpoint = node->target.address;
      out.connected = node->up == node->streams;
      out.clock_offset_s = node->offset_s;
      out.timestamp_s = node->timestamp_s;
      out.events = node->events;
      out.reconnects = node->reconnects;
      out.error = node->error;
      out.refused_status = node->refused_status;
      for (const std::string& name : node->energy.names()) {
        out.energy_j += node->energy.energy_j(name, cluster.timestamp_s);
        const auto watts = node->energy.power_w(name);
        if (!watts) continue;
        out.power_w += *watts;
        const int id = std::stoi(name.substr(name[0] == 'g' || name[0] == 'c' ? 3 : 4));
        if (name[0] == 'g') {
          out.gpu_power_w[id] = *watts;
        } else if (name[0] == 'c') {
          out.cpu_power_w[id].cpu_w = *watts;
        } else {
          out.cpu_power_w[id].dram_w = *watts;
        }
      }
      cluster.power_w += out.power_w;
      cluster.energy_j += out.energy_j;
      cluster.nodes.push_back(std::move(out));
    }
    return cluster;
  }

  bool wait_for_update(double timeout_s) const override {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t seen = generation_;
    return changed_.wait_for(lock, std::chrono::duration<double>(std::max(0.0, timeout_s)), [&] {
      return stopping_ || generation_ != seen;
    }) && !stopping_;
  }

  void stop() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    changed_.notify_all();
    for (auto& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }

 private:
  struct Node {
    PowerStreamTarget target;
    StreamAddress address;
    double offset_s = 0;
    bool warned_clock = false;  // a reading dated ahead of this machine was said once
    double timestamp_s = 0;
    client::PowerIntegrator energy;
    int streams = 0;  // kinds streamed
    int up = 0;       // streams connected now
    uint64_t events = 0;
    uint64_t reconnects = 0;
    std::string error;
    int refused_status = 0;  // NodePower::refused_status
  };

  bool stopping() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stopping_;
  }

  // Waits reconnect_delay_s unless stopped; false when stopped.
  bool pause_before_retry() {
    std::unique_lock<std::mutex> lock(mu_);
    return !changed_.wait_for(lock, std::chrono::duration<double>(options_.reconnect_delay_s),
                              [&] { return stopping_; });
  }

  void record(Node& node, const client::PowerEvent& event, double connected_s) {
    PowerStreamEvent out;
    {
      std::lock_guard<std::mutex> lock(mu_);
      // The first reading of a connection may be older than it (the power has not changed
      // since): energy counts from the connection on.
      double t = std::max(event.timestamp_s + node.offset_s, connected_s);
      // A reading dated after now (a daemon clock stepped forward, or one bad timestamp) counts
      // as now: it must not hold the device's energy back until that time comes.
      const double now = unix_now_s();
      if (t > now) {
        if (t > now + 5 && !node.warned_clock) {
          node.warned_clock = true;
          log_warning("zeus: " + node.target.address + ": a reading is dated " +
                      std::to_string(static_cast<long long>(t - now)) +
                      " s ahead of this machine after the clock offset measured at connect; "
                      "such readings count as received (check the node's clock)");
        }
        t = now;
      }
      node.energy.set(device_key(event.gpu, event.device_id), event.power_w, t);
      if (!event.gpu && event.dram_w) node.energy.set(dram_key(event.device_id), *event.dram_w, t);
      node.timestamp_s = std::max(node.timestamp_s, t);
      ++node.events;
      ++generation_;
      out = {node.target.address, event.gpu, event.device_id, event.power_w,
             event.dram_w,        t,         unix_now_s()};
    }
    changed_.notify_all();
    if (options_.on_event) options_.on_event(out);
  }

  // A keep-alive: the daemon is there and nothing changed for a second; waiters wake (iteration
  // yields the unchanged readings instead of looking hung on a steady GPU).
  void held_steady() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++generation_;
    }
    changed_.notify_all();
  }

  void went_down(Node& node, bool gpu, bool was_up) {
    std::lock_guard<std::mutex> lock(mu_);
    if (was_up) --node.up;
    const double now = unix_now_s();
    for (const std::string& name : node.energy.names()) {
      if ((name[0] == 'g') == gpu) node.energy.pause(name, now);
    }
    ++generation_;
  }

  // One node's stream of one kind, reconnected until stop().
  void run(Node& node, bool gpu) {
    const auto& ids = gpu ? node.target.gpu_ids : node.target.cpu_ids;
    std::string target = gpu ? "/gpu/stream_power" : "/cpu/stream_power";
    if (ids) target += std::string(gpu ? "?gpu_ids=" : "?cpu_ids=") + id_list(*ids);
    const std::string kind = gpu ? "GPU" : "CPU";
    for (int attempt = 0; !stopping(); ++attempt) {
      if (attempt > 0) {
        if (!pause_before_retry()) break;
        std::lock_guard<std::mutex> lock(mu_);
        ++node.reconnects;
      }
      auto client = open_client(node.address, options_.connect_timeout_s);
      if (!client) {
        set_error(node, client.error().message);
        continue;
      }
      bool measured = false;
      {
        std::lock_guard<std::mutex> lock(mu_);
        measured = !std::isnan(node.offset_s);
      }
      if (attempt > 0 || !measured) {
        // A restarted daemon may run on another clock: measured again on each reconnect (and
        // first of all for a node that could not be reached at start).
        auto offset = estimate_offset(**client, options_.clock_samples, node.target.token);
        if (!offset) {
          set_error(node, offset.error().message);
          continue;
        }
        std::lock_guard<std::mutex> lock(mu_);
        node.offset_s = *offset;
      }
      client::SseSplitter sse;
      int status = 0;
      bool up = false;
      double connected_s = 0;
      std::string refusal;
      auto answer = (*client)->stream(
          "GET", target, "", auth_headers(node.target.token),
          [&](const http::HttpResponse& head) {
            status = head.status;
            if (status == 200) {
              up = true;
              connected_s = unix_now_s();
              std::lock_guard<std::mutex> lock(mu_);
              ++node.up;
              node.error.clear();
              node.refused_status = 0;
            }
            return true;
          },
          [&](std::string_view piece) {
            if (status != 200) {
              refusal.append(piece.substr(0, 4096 - std::min<size_t>(refusal.size(), 4096)));
              return refusal.size() < 4096;
            }
            for (const std::string& data : sse.feed(piece)) {
              auto event = client::parse_power_event(data, gpu);
              if (!event) {
                log_warning("zeus: " + node.target.address + ": " + event.error().message);
                continue;
              }
              record(node, *event, connected_s);
            }
            if (sse.take_keepalives() > 0) held_steady();
            return !stopping();
          },
          options_.idle_timeout_s);
      went_down(node, gpu, up);
      if (!answer) {
        set_error(node, answer.error().message);
        continue;
      }
      if (status == 200) {
        if (!stopping()) set_error(node, kind + " stream ended or went quiet; reconnecting");
        continue;
      }
      std::string message = refusal;
      const auto json = nlohmann::json::parse(refusal, nullptr, false);
      if (!json.is_discarded() && json.is_object() && json.contains("error") &&
          json["error"].is_string()) {
        message = json["error"].get<std::string>();
      }
      const std::string why = (*client)->where() + target + " answered " + std::to_string(status) +
                              (message.empty() ? "" : ": " + message);
      {
        std::lock_guard<std::mutex> lock(mu_);
        node.refused_status = status;
      }
      if (status == 403 || status == 404 || status == 400) {
        // Not allowed, not a streaming zeusd, or devices it lacks: retrying will not help. A
        // kind streamed by default (no ids asked for) is skipped quietly, as upstream does.
        if (ids || status == 400) {
          set_error(node, why);
        } else {
          log_info("zeus: skipping " + kind + " power of " + node.target.address + ": " + why);
        }
        std::lock_guard<std::mutex> lock(mu_);
        --node.streams;
        return;
      }
      set_error(node, why);
    }
  }

  void set_error(Node& node, const std::string& message) {
    log_warning("zeus: power stream of " + node.target.address + ": " + message);
    std::lock_guard<std::mutex> lock(mu_);
    node.error = message;
  }

  const PowerStreamingOptions options_;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  uint64_t generation_ = 0;
  bool stopping_ = false;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::thread> threads_;
};

}  // namespace

Result<StreamAddress> parse_stream_address(const std::string& text) {
  auto bad = [&] {
    return fail(ErrorCode::kInvalidArgument,
                "'" + text +
                    "' is not a zeusd address: write HOST:PORT, [IPv6]:PORT, "
                    "unix:/path/to/zeusd.sock or /path/to/zeusd.sock");
  };
  StreamAddress out;
  if (text.rfind("unix:", 0) == 0 || text.rfind('/', 0) == 0) {
    out.socket_path = text.rfind("unix:", 0) == 0 ? text.substr(5) : text;
    if (out.socket_path.empty() || out.socket_path[0] != '/') return bad();
    return out;
  }
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return bad();
  std::string host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return bad();
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string::npos) {
    return bad();  // an IPv6 address needs its brackets
  }
  const std::string port = text.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
    return bad();
  out.host = host;
  out.port = std::stoi(port);
  if (out.port < 1 || out.port > 65535) return bad();
  return out;
}

Result<std::unique_ptr<PowerStreamingClient>> PowerStreamingClient::start(
    std::vector<PowerStreamTarget> targets, PowerStreamingOptions options) {
  if (targets.empty()) {
    return fail(ErrorCode::kInvalidArgument, "no zeusd to stream from: give at least one address");
  }
  if (!(options.reconnect_delay_s >= 0 && options.reconnect_delay_s <= 3600) ||
      !(options.idle_timeout_s > 0 && options.idle_timeout_s <= 3600) ||
      !(options.connect_timeout_s > 0 && options.connect_timeout_s <= 3600) ||
      options.clock_samples < 1 || options.clock_samples > 1000) {
    return fail(ErrorCode::kInvalidArgument,
                "power streaming options out of range: reconnect delay 0-3600 s, idle and connect "
                "timeouts (0, 3600] s, 1-1000 clock samples");
  }
  std::vector<StreamAddress> addresses;
  std::vector<double> offsets;
  std::vector<std::string> unreachable;
  for (const PowerStreamTarget& target : targets) {
    for (const PowerStreamTarget& other : targets) {
      if (&other != &target && other.address == target.address) {
        return fail(ErrorCode::kInvalidArgument,
                    "zeusd " + target.address + " is given twice (give each daemon once)");
      }
    }
    if (target.token.find_first_of("\r\n") != std::string::npos) {
      return fail(ErrorCode::kInvalidArgument,
                  "the token for " + target.address + " holds a line break (give the token only)");
    }
    for (const auto& ids : {target.gpu_ids, target.cpu_ids}) {
      if (!ids) continue;
      for (int id : *ids) {
        if (id < 0) {
          return fail(ErrorCode::kInvalidArgument, "device index " + std::to_string(id) + " for " +
                                                       target.address + " is negative");
        }
      }
    }
    auto address = parse_stream_address(target.address);
    if (!address) return fail(address.error());
    auto client = open_client(*address, options.connect_timeout_s);
    auto offset = client ? estimate_offset(**client, options.clock_samples, target.token)
                         : Result<double>(tl::unexpected(client.error()));
    if (!offset) {
      unreachable.push_back("cannot reach zeusd " + target.address + ": " +
                            offset.error().message +
                            " (is zeusd running there, and is the address its --tcp or --socket?)");
    }
    addresses.push_back(*address);
    offsets.push_back(offset ? *offset : std::nan(""));
  }
  // One node down (rebooting) does not stop the others from being watched: it shows as down
  // and is retried. Nothing reachable at all is an error (a wrong address, no zeusd).
  if (unreachable.size() == targets.size()) {
    std::string all;
    for (const std::string& why : unreachable) all += (all.empty() ? "" : "; ") + why;
    return fail(ErrorCode::kUnavailable, all);
  }
  for (const std::string& why : unreachable) log_warning("zeus: " + why + "; retrying");
  return std::unique_ptr<PowerStreamingClient>(std::make_unique<StreamingClient>(
      std::move(targets), std::move(addresses), std::move(offsets), std::move(options)));
}

}  // namespace zeus
