// The proxy's meter: the EnergyLedger fed by the GPUs' energy counters under one mutex, a
// background thread reading them every interval, the run's last requests for the steady-state
// method and the report (RunWindow, bounded), and the JSONL log. Requests report to it as they go;
// each learns its energy at its end (the meter reads the counters then, so the request's last
// interval closes). Thread-safety: every method from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "proxy/attribution.h"
#include "proxy/counter_follower.h"
#include "proxy/energy_reader.h"
#include "proxy/live_feed.h"
#include "proxy/proxy.h"
#include "proxy/run_report.h"
#include "proxy/run_window.h"
#include "serving/governor/serving_load.h"

namespace zeus::proxy {

// What one finished request reports for the log.
struct RequestRecord {
  RequestId id = 0;
  std::string model;
  bool streamed = false;
  int status = 0;
  double ttft_s = -1;  // -1: no token seen
  double latency_s = 0;
  std::string request_id;   // the client's X-Request-Id, "" when none
  std::string response_id;  // the answer's "id" (e.g. chatcmpl-...), "" when none
};

class Meter {
 public:
  // steady_state_window: the finished requests kept for the steady-state method and the report.
  Meter(GpuEnergyReader reader, double interval_s, std::string log_path,
        size_t steady_state_window = kDefaultSteadyStateWindow);
  ~Meter();  // stops the thread
  Result<void> open_log();

  double now_s() const;  // seconds on the meter's clock (steady)
  // Publishes readings, starts and ends to `feed` (the live page) as its source `source`; call
  // before the first request. `feed` must outlive the meter.
  void publish_to(LiveFeed* feed, int source);
  // body_bytes: the request's, for the governor's prompt-token estimate (serving_load.h).
  RequestId begin(bool streamed, const std::string& model = {}, size_t body_bytes = 0);
  void tokens(RequestId id, int64_t count);
  void usage(RequestId id, int64_t prompt_tokens, int64_t completion_tokens);
  // Ends the request and answers what it was charged.
  RequestEnergy end(RequestId id, const RequestRecord& record);
  ProxySummary summary();
  ProxyStatus status();
  RunReport report();
  // The governor's view (serving_load.h): the load now and the latencies since the last call;
  // readings_ok false while the energy counters cannot be read.
  ServingObservation serving_observation();
  void set_slos(double ttft_slo_s, double tpot_slo_s);
  SloAttainment attainment();
  // Appends one line (a JSON object) to the JSONL log, when there is one.
  void log_line(const std::string& line);

 private:
  void sample_locked();
  void update_power_locked(double time_s, const std::vector<double>& each_j);
  void run();

  GpuEnergyReader reader_;
  const double interval_s_;
  const std::string log_path_;
  const std::chrono::steady_clock::time_point epoch_ = std::chrono::steady_clock::now();
  const double epoch_unix_s_ =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  LiveFeed* feed_ = nullptr;
  int feed_source_ = 0;
  std::mutex mu_;
  EnergyLedger ledger_;
  RequestId next_id_ = 1;
  std::map<RequestId, RequestEnergy> settled_;
  RunWindow window_;
  double power_mark_s_ = -1;  // per-GPU power: the counters at the last mark
  std::vector<double> power_mark_j_;
  CounterFollower follower_;  // each GPU's counter between its publishes
  std::vector<double> gpu_power_w_;
  int64_t requests_ = 0, output_tokens_ = 0;
  bool read_failed_ = false;
  bool last_read_ok_ = true;
  ServingLoad load_;
  std::ofstream log_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace zeus::proxy
