// ClockGovernorLoop: `zeus proxy --govern`, the I/O shell around the pure ServingGovernor
// (zeus/serving/serving_governor.h). Every period it takes the meter's ServingObservation
// (serving/governor/serving_load.h), asks the governor for a clock and requests it from one
// FrequencyController per GPU (the
// Perseus runtime's: never blocks, zeusd leases where ZEUSD_SOCK_PATH names a zeusd so a killed
// proxy never leaves a GPU slowed; NVML otherwise; at start the power limit back to its default,
// memory clocks locked at their maximum; SM and memory clocks unlocked on stop(), the
// destructor, exit() and SIGINT/SIGTERM).
// The profile is the parametric model on this GPU's clock ladder (serving_clock_ladder): the
// governor's online correction carries what the model gets wrong about the server in front.
// Each decision whose clock or reason differs from the one before goes to the JSONL log as
// {"type": "governor", ...}; the chosen clock and SLO attainment to the live page (LiveFeed) and
// /metrics (ProxyStatus). The energy saved against the maximum clock is an ESTIMATE, never shown
// as a measurement: each period's measured energy x (the profile's energy per iteration at the
// maximum clock over the one at the clock in force, at the observed load) - 1; the exit summary
// and /metrics say so, and how to measure the saving (a run without --govern).
// Thread-safety: status() from any thread; stop() from one.
// Failure: start() fails when a GPU's clocks cannot be set (PermissionDenied names the fix).
//
// Where it lives: in the proxy, whose relay feeds it and which starts and stops it; the serving
// wing (src/serving/, docs/architecture.md "The serving wing") holds the governor it drives, what
// it observes (serving/governor/serving_load.h), the simulator that replays the same governor and
// `zeus proxy calibrate` (serving/live/), which includes the proxy's parts and nothing includes.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "proxy/engine_scraper.h"
#include "proxy/proxy.h"
#include "zeus/common/result.h"
#include "zeus/device/device.h"
#include "zeus/device_control/frequency_controller.h"
#include "zeus/serving/serving_governor.h"

namespace zeus::proxy {

class Meter;
class LiveFeed;

class ClockGovernorLoop {
 public:
  // `gpus`, `meter` and `feed` (may be null) must outlive the loop. `scraper` (may be null:
  // --engine-metrics off) reads the engine's own load each period; the larger of its running and
  // waiting requests and the proxy's count. Its first answer decides the start-up line
  // (load_source()); a later change of source is a warning.
  static Result<std::unique_ptr<ClockGovernorLoop>> start(const std::vector<Gpu*>& gpus,
                                                          Meter& meter, GovernOptions options,
                                                          LiveFeed* feed, int feed_source,
                                                          std::unique_ptr<EngineScraper> scraper = nullptr);
  // Where the load comes from, in words ("the upstream's /metrics (vLLM: ...) beside the
  // proxy's own view", or "the proxy's own view only: <why>").
  std::string load_source();
  ~ClockGovernorLoop();
  // Stops deciding and restores every GPU's clocks. Idempotent.
  void stop();
  // Fills the governor's fields of `status`.
  void add_status(ProxyStatus& status);

 private:
  ClockGovernorLoop(std::vector<std::unique_ptr<FrequencyController>> controllers,
                    std::unique_ptr<ServingGovernor> governor, ServingProfile profile, Meter& meter,
                    GovernOptions options, LiveFeed* feed, int feed_source,
                    std::unique_ptr<EngineScraper> scraper);
  void run();
  void step();
  // Reads the engine (when there is a scraper) into `o`; notes a change of source.
  void merge_engine_load(ServingObservation& o, nlohmann::json& row);

  std::vector<std::unique_ptr<FrequencyController>> controllers_;
  std::unique_ptr<ServingGovernor> governor_;
  const ServingProfile profile_;
  Meter& meter_;
  const GovernOptions options_;
  LiveFeed* feed_;
  const int feed_source_;

  std::unique_ptr<EngineScraper> scraper_;  // the governor's thread only
  bool engine_ok_ = false;                   // the last scrape succeeded

  std::mutex mu_;  // guards what follows
  std::string load_source_;
  ClockDecision last_;
  bool decided_ = false;
  int64_t changes_ = 0;
  double saved_j_ = 0;
  double measured_mark_j_ = -1;
  bool warned_unreachable_ = false;
  bool stopping_ = false;
  std::condition_variable wake_;
  std::thread thread_;
};

}  // namespace zeus::proxy
