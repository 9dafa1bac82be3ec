// RunWindow: what the steady-state method and `--report` need of a `zeus proxy` run, in memory
// bounded however long the proxy runs. It keeps the last max_requests finished requests (their
// timelines, with a time per streamed token, and their settled figures), the requests in flight,
// and, of the energy counter's readings, only those around each kept request's first token and
// end: the reading at or before the instant and the first one after it. The steady-state window
// always starts at a first token and ends at an end, and the counter is interpolated between the
// two readings around an instant, so the window's energy is the same as with every reading kept.
// When more requests have finished, the oldest are dropped first and the method runs over the
// last max_requests (over the whole run while it is no longer than that, as before the bound).
// Memory: about 8 bytes per output token of a kept request, plus ~200 bytes and at most four
// readings (16 bytes each) per kept or in-flight request.
// Pure: no clock, no I/O; the caller reports readings and request events in time order.
// Thread-safety: none (the meter holds it under its mutex).
//
//   RunWindow run(10000);
//   run.reading(0, 100); run.begin(1, 0.1); run.tokens(1, 0.2, 1); run.end(1, 0.3);
//   run.reading(0.31, 130); run.finish({1, "m", 1, 30, "tokens"});
//   SteadyState s = run.steady_state();  // and run.results() for the report
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "proxy/attribution.h"
#include "proxy/run_report.h"
#include "proxy/steady_state.h"

namespace zeus::proxy {

class RunWindow {
 public:
  explicit RunWindow(size_t max_requests = kDefaultSteadyStateWindow);

  // A reading of the energy counter (J, summed over the GPUs), not before the previous one.
  void reading(double time_s, double energy_j);
  // A request began; `count` of its tokens were seen; it ended (its last byte out, reported before
  // the reading that closes it). Unknown ids are ignored.
  void begin(RequestId id, double time_s);
  void tokens(RequestId id, double time_s, int64_t count);
  void end(RequestId id, double time_s);
  // When a request in flight began (0 when unknown).
  double start_s(RequestId id) const;
  // Its settled figures, once the ledger has them: it joins the kept requests (its output_tokens
  // replace the tokens counted), and the oldest kept one goes if there are more than the bound.
  void finish(const FinishedRequest& result);

  // The benchmark's method over the kept requests (request_energy_j in the order of results()).
  SteadyState steady_state() const;
  std::vector<FinishedRequest> results() const;  // the kept requests, in the order they finished
  int64_t dropped() const { return dropped_; }   // finished requests no longer kept
  size_t max_requests() const { return max_requests_; }

  struct Sizes {
    size_t requests = 0;     // kept finished requests
    size_t in_flight = 0;    // begun and not finished
    size_t readings = 0;     // readings kept
    size_t token_times = 0;  // token times held, kept and in-flight requests together
  };
  Sizes sizes() const;

 private:
  void keep_reading_around();  // an instant is now: keep the last reading and the next one
  void drop_oldest();
  void prune_readings();  // keeps only the readings around instants of kept or in-flight requests

  size_t max_requests_;
  std::unordered_map<RequestId, RequestTimeline> open_;
  // Kept requests are [first_, size): dropped ones are released at once and erased in batches.
  std::vector<RequestTimeline> timelines_;
  std::vector<FinishedRequest> results_;
  size_t first_ = 0;
  int64_t dropped_ = 0;
  size_t token_times_ = 0;
  std::vector<EnergyReading> kept_;  // in time order
  EnergyReading last_;
  bool have_last_ = false;
  bool keep_next_ = false;
  size_t prune_at_ = 64;  // kept_'s size that triggers the next prune
};

}  // namespace zeus::proxy
