// ServingLoad: what the clock governor (zeus/serving/serving_governor.h) observes of an
// inference server, kept from the requests the proxy relays: requests waiting for their first
// token and running (producing tokens), their context, the prompt tokens arriving, the mean length of the answers
// finished, and the TTFT and TPOT of the streamed requests that got a first token or finished
// since the last observation; and the run's SLO attainment.
// Prompt tokens are not counted by the proxy (it never parses a prompt): a request's are
// estimated from its body's bytes at `tokens_per_byte` (0.25 to start: about 4 bytes a token in
// English JSON), a ratio corrected online whenever an answer's usage reports the real count.
// Only streamed requests give latencies (a whole answer's first token is its last byte); every
// request counts in the load. Pure: times come from the caller (the meter's clock); no I/O.
// Bounded: one entry per request in flight (the proxy bounds those), at most max_samples
// latencies per observation (the rest are counted in the attainment, not kept).
// Thread-safety: none (the meter calls it under its mutex).
//
//   ServingLoad load;  load.started(1, t0, true, 2000);  load.tokens(1, t1, 1);
//   ServingObservation o = load.observe(t2);   // consumes the latencies since the last call
#pragma once

#include <cstdint>
#include <unordered_map>

#include "zeus/serving/serving_governor.h"

namespace zeus {

// The run's share of streamed requests within the SLOs (TPOT: requests with >= 2 tokens).
struct SloAttainment {
  int64_t finished = 0;     // streamed requests that produced a token
  int64_t within_both = 0;  // TTFT and TPOT (where it has one) within their SLOs
  int64_t ttft_over = 0;
  int64_t tpot_over = 0;
  double rate() const { return finished > 0 ? static_cast<double>(within_both) / finished : 1.0; }
};

class ServingLoad {
 public:
  explicit ServingLoad(size_t max_samples = 4096) : max_samples_(max_samples) {}
  // The SLOs the attainment is counted against (<= 0: not counted).
  void set_slos(double ttft_slo_s, double tpot_slo_s);

  void started(uint64_t id, double time_s, bool streamed, size_t body_bytes);
  // `count` tokens at time_s; the first ones give the request's TTFT.
  void tokens(uint64_t id, double time_s, int64_t count);
  // The answer's usage: the real prompt tokens (corrects the bytes-to-tokens ratio).
  void prompt_tokens(uint64_t id, int64_t count);
  void finished(uint64_t id, double time_s);

  // The load now and the latencies since the last call (which it forgets); readings_ok true.
  ServingObservation observe(double now_s);
  SloAttainment attainment() const { return attainment_; }
  double tokens_per_byte() const { return tokens_per_byte_; }

 private:
  struct Request {
    double start_s = 0;
    double first_s = -1;  // first token (-1: none yet)
    bool streamed = false;
    size_t body_bytes = 0;
    double prompt_tokens = 0;  // estimated, then the usage's
    int64_t output_tokens = 0;
  };
  void keep(std::vector<double>& samples, double value);

  const size_t max_samples_;
  double ttft_slo_s_ = 0, tpot_slo_s_ = 0;
  std::unordered_map<uint64_t, Request> in_flight_;
  double tokens_per_byte_ = 0.25;
  double last_observed_s_ = -1;
  double arrived_prompt_tokens_ = 0;  // since the last observation
  int64_t arrived_ = 0;
  double finished_output_tokens_ = 0;  // of the answers finished since the last observation
  int64_t finished_answers_ = 0;
  std::vector<double> ttft_s_, tpot_s_;
  SloAttainment attainment_;
};

}  // namespace zeus
