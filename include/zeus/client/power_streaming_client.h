// PowerStreamingClient: live GPU and CPU power of many machines at once, from their zeusd
// daemons' power streams (GET /gpu/stream_power and /cpu/stream_power, Server-Sent Events), the
// C++ side of upstream Zeus's zeus.monitor.power_streaming.PowerStreamingClient.
//
// Each daemon is a node, named as given: "HOST:PORT" (TCP) or "unix:/path" (or a plain "/path")
// for a Unix socket. Before streaming, the client estimates each daemon's clock offset from the
// median of several GET /time round trips (client midpoint minus daemon time), and maps the
// events' daemon timestamps onto its own clock. One thread per node and device kind keeps a
// stream open and reconnects (after reconnect_delay_s) when it drops or stays silent for
// idle_timeout_s (zeusd sends a keep-alive every second); a dropped node's devices count as
// unknown, neither power nor energy, until it is back. Per node and for the whole cluster it
// gives the power now and the energy integrated since each device's first reading (the power
// holds between two events: zeusd sends one when it changes).
// Thread-safety: every method may be called from any thread. Failure: start() answers
// InvalidArgument for a malformed target and Unavailable naming the daemon when one cannot be
// reached at start; later drops are retried, counted in NodePower::reconnects.
//
//   auto client = zeus::PowerStreamingClient::start({{"node1:4938"}, {"unix:/run/zeusd.sock"}});
//   zeus::ClusterPower now = (*client)->power();   // now.power_w, now.energy_j, now.nodes
//   (*client)->stop();
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/common/result.h"

namespace zeus {

// One daemon and what to stream from it (nullopt: every device the daemon has and lets the
// caller read; an empty list: none of that kind; a list: those, whose refusal is an error).
struct PowerStreamTarget {
  std::string address;  // "HOST:PORT", "[IPv6]:PORT", "unix:/path" or "/path"
  std::optional<std::vector<int>> gpu_ids;
  std::optional<std::vector<int>> cpu_ids;
  std::string token;  // non-empty: sent as "Authorization: Bearer <token>" (a zeusd with JWTs)
};

struct CpuPowerW {
  double cpu_w = 0;
  std::optional<double> dram_w;
};

struct NodePower {
  std::string endpoint;       // the address as given
  bool connected = false;     // every stream of the node is up
  double clock_offset_s = 0;  // add to the daemon's time to get the client's
  double timestamp_s = 0;     // the newest reading, client clock (Unix seconds); 0: none yet
  std::map<int, double> gpu_power_w;
  std::map<int, CpuPowerW> cpu_power_w;
  double power_w = 0;   // the sum of the devices known now (DRAM included)
  double energy_j = 0;  // integrated since each device's first reading
  uint64_t events = 0;
  uint64_t reconnects = 0;
  std::string error;  // the last failure, empty when none
  // The HTTP status of the last refused stream (401: no token, or one zeusd does not accept; 403,
  // 404, 400), 0 when none or once a stream is up again. A 401 is retried like a drop, so a
  // caller that cannot wait for a new token (`zeus power --from`) stops on it.
  int refused_status = 0;
};

struct ClusterPower {
  double timestamp_s = 0;  // when this snapshot was taken (client clock)
  std::vector<NodePower> nodes;
  double power_w = 0;
  double energy_j = 0;
};

// One event as it arrived (for a live display or a latency measurement).
struct PowerStreamEvent {
  std::string endpoint;
  bool gpu = true;
  int device_id = 0;
  double power_w = 0;
  std::optional<double> dram_w;
  double timestamp_s = 0;  // the daemon's time mapped onto the client's clock
  double received_s = 0;   // the client's clock when it arrived
};

struct PowerStreamingOptions {
  double reconnect_delay_s = 1.0;
  int clock_samples = 5;        // GET /time round trips per offset estimate (odd: a true median)
  double idle_timeout_s = 5.0;  // a stream silent this long is treated as dropped
  double connect_timeout_s = 5.0;
  // Called on a stream's thread for every reading, after the totals include it; must be quick.
  std::function<void(const PowerStreamEvent&)> on_event;
};

class PowerStreamingClient {
 public:
  static Result<std::unique_ptr<PowerStreamingClient>> start(std::vector<PowerStreamTarget> targets,
                                                             PowerStreamingOptions options = {});
  virtual ~PowerStreamingClient() = default;

  // The power and energy now.
  virtual ClusterPower power() const = 0;
  // Waits until a reading arrives after this call, or a daemon's keep-alive says its power holds
  // (zeusd sends one after a second without change) (true), or `timeout_s` passes or stop() is
  // called (false).
  virtual bool wait_for_update(double timeout_s) const = 0;
  // Ends every stream (within about a second) and joins the threads; idempotent.
  virtual void stop() = 0;
};

// "HOST:PORT", "[v6]:PORT", "unix:/path" or "/path" -> (host, port) or a socket path; checked
// (InvalidArgument naming the accepted forms).
struct StreamAddress {
  std::string host;  // empty for a Unix socket
  int port = 0;
  std::string socket_path;  // empty for TCP
};
Result<StreamAddress> parse_stream_address(const std::string& text);

}  // namespace zeus
