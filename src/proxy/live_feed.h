// LiveFeed: what the proxy's live page (/zeus/) shows, kept in bounded memory and pushed to its
// listeners as Server-Sent Events. Sources are the meters (one per upstream: "proxy", or the
// Colosseum's "a" and "b"); each reports its energy counter readings (turned here into power
// points averaged over at least min_power_period_s), the requests it starts and the ones it
// finishes with their energy and tokens. The feed keeps the last max_requests finished requests,
// the last max_power_points power points per source, the requests in flight, and per model the
// totals of every finished request (requests, energy, output tokens; at most max_models models,
// later ones counted under "(other)").
// Listeners: subscribe() sends a "snapshot" event, then "power", "start" and "end" events as
// they happen. Sending never blocks: the HTTP layer queues each listener's events in a bounded
// buffer and drops a listener that falls behind (its connection closed); at most max_listeners
// listen at once (subscribe() refuses more).
// Times are Unix seconds. Thread-safety: every method from any thread.
//
//   LiveFeed feed;  int s = feed.add_source("proxy", "GPU 0");
//   feed.started(s, 1, "llama", t0);  feed.energy(s, t1, 1234.5);
//   feed.finished(s, {1, "llama", t0, t1, 12.5, 40, 200});
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "http/server.h"

namespace zeus::proxy {

struct LiveFeedLimits {
  size_t max_requests = 500;
  size_t max_power_points = 3000;  // per source (5 min at 0.1 s)
  size_t max_models = 64;
  size_t max_listeners = 32;
  double min_power_period_s = 0.1;
};

// One request as the page shows it (end_s < 0: in flight).
struct LiveRequest {
  uint64_t id = 0;
  std::string model;
  double start_s = 0;
  double end_s = -1;
  double energy_j = 0;
  int64_t output_tokens = 0;
  int status = 0;
};

class LiveFeed {
 public:
  explicit LiveFeed(LiveFeedLimits limits = {}) : limits_(limits) {}

  // A new source (a meter); `gpus` says which GPUs it reads, for the page. Answers its index.
  int add_source(const std::string& name, const std::string& gpus);
  // "GPU 0,1" for indices {0, 1}; "all GPUs" for none.
  static std::string gpus_label(const std::vector<int>& indices);
  void started(int source, uint64_t id, const std::string& model, double time_s);
  void finished(int source, const LiveRequest& request);
  // A reading of the source's energy counter (J, monotone; a reset starts over).
  void energy(int source, double time_s, double energy_j);
  // zeus proxy --govern: the SM clock chosen (MHz) and the SLO attainment (0-1) at time_s; kept
  // like power points (the page draws the clock beside the power).
  void clock(int source, double time_s, double clock_mhz, double slo_attainment);

  // Everything kept, as the "snapshot" event's JSON (also GET /zeus/state).
  std::string snapshot_json() const;
  // Starts sending to `listener`; false (nothing sent) when max_listeners listen already.
  bool subscribe(std::shared_ptr<http::EventStream> listener);
  size_t listeners() const;
  bool full() const { return listeners() >= limits_.max_listeners; }

 private:
  struct PowerPoint {
    double time_s, watts;
  };
  struct ClockPoint {
    double time_s, mhz, attainment;
  };
  struct Source {
    std::string name, gpus;
    std::deque<PowerPoint> power;
    bool read = false;
    double last_time_s = 0, last_energy_j = 0;
    std::map<uint64_t, LiveRequest> in_flight;
    std::deque<LiveRequest> done;
    std::deque<ClockPoint> clock = {};  // --govern
  };
  struct ModelTotals {
    int64_t requests = 0;
    double energy_j = 0;
    int64_t output_tokens = 0;
  };

  std::string snapshot_locked() const;
  void broadcast_locked(const std::string& data, const char* name);
  std::string model_key_locked(const std::string& model);

  const LiveFeedLimits limits_;
  mutable std::mutex mu_;
  std::vector<Source> sources_;
  std::map<std::string, ModelTotals> models_;
  std::vector<std::shared_ptr<http::EventStream>> listeners_;
};

}  // namespace zeus::proxy
