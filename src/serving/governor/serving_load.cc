#include "serving/governor/serving_load.h"

#include <algorithm>

namespace zeus {

void ServingLoad::set_slos(double ttft_slo_s, double tpot_slo_s) {
  ttft_slo_s_ = ttft_slo_s;
  tpot_slo_s_ = tpot_slo_s;
}

void ServingLoad::keep(std::vector<double>& samples, double value) {
  if (samples.size() < max_samples_) samples.push_back(value);
}

void ServingLoad::started(uint64_t id, double time_s, bool streamed, size_t body_bytes) {
  Request r;
  r.start_s = time_s;
  r.streamed = streamed;
  r.body_bytes = body_bytes;
  r.prompt_tokens = tokens_per_byte_ * static_cast<double>(body_bytes);
  in_flight_[id] = r;
  arrived_prompt_tokens_ += r.prompt_tokens;
  ++arrived_;
}

void ServingLoad::tokens(uint64_t id, double time_s, int64_t count) {
  auto it = in_flight_.find(id);
  if (it == in_flight_.end() || count <= 0) return;
  Request& r = it->second;
  if (r.first_s < 0) {
    r.first_s = time_s;
    if (r.streamed) keep(ttft_s_, time_s - r.start_s);
  }
  r.output_tokens += count;
}

void ServingLoad::prompt_tokens(uint64_t id, int64_t count) {
  auto it = in_flight_.find(id);
  if (it == in_flight_.end() || count <= 0) return;
  Request& r = it->second;
  r.prompt_tokens = static_cast<double>(count);
  if (r.body_bytes > 0) {  // smoothed over about ten answers, within a sane range
    const double seen = std::clamp(static_cast<double>(count) / r.body_bytes, 0.01, 4.0);
    tokens_per_byte_ += 0.1 * (seen - tokens_per_byte_);
  }
}

void ServingLoad::finished(uint64_t id, double time_s) {
  auto it = in_flight_.find(id);
  if (it == in_flight_.end()) return;
  const Request r = it->second;
  in_flight_.erase(it);
  if (r.output_tokens > 0) {  // the answers' length: a request's TPOT is a mean over it
    finished_output_tokens_ += static_cast<double>(r.output_tokens);
    ++finished_answers_;
  }
  if (!r.streamed || r.first_s < 0) return;
  const double ttft = r.first_s - r.start_s;
  double tpot = -1;
  if (r.output_tokens >= 2) {
    tpot = (time_s - r.first_s) / static_cast<double>(r.output_tokens - 1);
    keep(tpot_s_, tpot);
  }
  ++attainment_.finished;
  const bool ttft_over = ttft_slo_s_ > 0 && ttft > ttft_slo_s_;
  const bool tpot_over = tpot_slo_s_ > 0 && tpot > tpot_slo_s_;
  attainment_.ttft_over += ttft_over ? 1 : 0;
  attainment_.tpot_over += tpot_over ? 1 : 0;
  attainment_.within_both += (ttft_over || tpot_over) ? 0 : 1;
}

ServingObservation ServingLoad::observe(double now_s) {
  ServingObservation o;
  o.now_s = now_s;
  double context = 0;
  for (const auto& [id, r] : in_flight_) {
    if (r.first_s < 0) {
      o.waiting += 1;
    } else {
      o.running += 1;
      context += r.prompt_tokens + static_cast<double>(r.output_tokens);
    }
  }
  o.mean_context_tokens = o.running > 0 ? context / o.running : 0;
  const double period = last_observed_s_ < 0 ? 0 : now_s - last_observed_s_;
  o.prompt_tokens_per_s = period > 0 ? arrived_prompt_tokens_ / period : 0;
  o.mean_prompt_tokens = arrived_ > 0 ? arrived_prompt_tokens_ / arrived_ : 0;
  o.mean_output_tokens = finished_answers_ > 0 ? finished_output_tokens_ / finished_answers_ : 0;
  o.ttft_s = std::move(ttft_s_);
  o.tpot_s = std::move(tpot_s_);
  ttft_s_.clear();
  tpot_s_.clear();
  arrived_prompt_tokens_ = 0;
  arrived_ = 0;
  finished_output_tokens_ = 0;
  finished_answers_ = 0;
  last_observed_s_ = now_s;
  return o;
}

}  // namespace zeus
