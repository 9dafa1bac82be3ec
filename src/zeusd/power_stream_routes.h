// PowerStreamRoutes: upstream zeusd's live power streams, Server-Sent Events (text/event-stream,
// Cache-Control: no-cache, chunked) with one "data: <json>" line per event:
//   GET /gpu/stream_power?gpu_ids=0,1   {"timestamp_ms", "gpu_id", "power_mw"}     gpu-read
//   GET /cpu/stream_power?cpu_ids=0     {"timestamp_ms", "cpu_id", "cpu_mw", "dram_mw"} cpu-read
// The ids are optional (every device) and checked as on the other reads (upstream_query.h): 400
// {"error"} for a malformed or unknown id, 403 {"error"} when the allow-list refuses the caller.
// A GPU event is sent when its power changes; a CPU event carries package and DRAM power from
// RAPL energy deltas over the time measured between two polls (power_samples.h). On connect a
// listener gets every requested device's current power at once (upstream sends nothing until the
// next change, so a client could never learn a steady power; our addition). One poller per kind
// serves every listener (power_fanout.h), at gpu_power_poll_hz / cpu_power_poll_hz, and only
// while someone listens; a listener more than the server's stream buffer behind is dropped.
// Thread-safety: handle() from any thread; device reads hold `device_mutex`.
//
//   PowerStreamRoutes streams(devices, allow, mutex, options);
//   if (PowerStreamRoutes::owns(request)) streams.handle(request, peer, reply);
#pragma once

#include <memory>
#include <mutex>

#include "http/message.h"
#include "http/server.h"
#include "zeus/device/device.h"
#include "zeusd/allow_list.h"
#include "zeusd/power_fanout.h"
#include "zeusd/upstream_routes.h"

namespace zeus::zeusd {

class PowerStreamRoutes {
 public:
  // `devices`, `allow` and `device_mutex` must outlive the routes.
  PowerStreamRoutes(Devices& devices, const AllowList& allow, std::mutex& device_mutex,
                    const UpstreamOptions& options);
  ~PowerStreamRoutes();

  // True for GET /gpu/stream_power and GET /cpu/stream_power.
  static bool owns(const http::HttpRequest& request);
  // Answers (an error) or starts the event stream. Never throws.
  void handle(const http::HttpRequest& request, const Peer& peer,
              const std::shared_ptr<http::Reply>& reply);

  PowerFanout& gpu_fanout() { return *gpu_; }
  PowerFanout& cpu_fanout() { return *cpu_; }

 private:
  std::vector<PowerFanout::Event> poll_gpus(bool restart);
  std::vector<PowerFanout::Event> poll_cpus(bool restart);

  Devices& devices_;
  const AllowList& allow_;
  std::mutex& device_mutex_;
  struct PollState;  // change filter and RAPL meters, touched only by the pollers
  std::unique_ptr<PollState> state_;
  std::unique_ptr<PowerFanout> gpu_;
  std::unique_ptr<PowerFanout> cpu_;
};

}  // namespace zeus::zeusd
