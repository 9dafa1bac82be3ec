#include "proxy/attribution.h"

#include <algorithm>

namespace zeus::proxy {

void EnergyLedger::start(RequestId id, double time_s, bool streamed) {
  Request request;
  request.start_s = time_s;
  request.streamed = streamed;
  if (!requests_.emplace(id, request).second) return;  // a repeated id is ignored
  if (in_flight_++ == 0) busy_since_s_ = sampled_ ? std::max(time_s, last_time_s_) : time_s;
}

void EnergyLedger::tokens(RequestId id, double, int64_t count) {
  auto it = requests_.find(id);
  if (it == requests_.end() || it->second.end_s >= 0 || count <= 0) return;
  Request& request = it->second;
  if (!request.seen_token) request.first_token_since_sample = true;
  request.seen_token = true;
  request.counted += count;
  request.tokens_since_sample += static_cast<double>(count);
}

void EnergyLedger::Interval::count(const Part& part, double sign) {
  total_overlap_s += sign * part.overlap_s;
  if (part.weight < 0) {
    unknown_overlap_s += sign * part.overlap_s;
    unknown = sign > 0 ? unknown + 1 : unknown - 1;
    return;
  }
  known_sum += sign * part.weight;
  known_overlap_s += sign * part.overlap_s;
  if (part.weight > 0) positive = sign > 0 ? positive + 1 : positive - 1;
  if (positive == 0) known_sum = 0;  // no float residue where every known weight is 0
}

void EnergyLedger::reweigh(Request& request) {
  for (const auto& [seq, index] : request.parts) {
    if (seq < first_seq_) continue;
    Interval& interval = intervals_[seq - first_seq_];
    Part& part = interval.parts[index];
    if (part.taken) continue;
    interval.count(part, -1);
    part.weight = known_weight(part, request);
    interval.count(part, +1);
  }
}

void EnergyLedger::prompt_tokens(RequestId id, int64_t count) {
  auto it = requests_.find(id);
  if (it == requests_.end() || count < 0) return;
  it->second.prompt = count;
  reweigh(it->second);
}

void EnergyLedger::output_tokens(RequestId id, int64_t count) {
  auto it = requests_.find(id);
  if (it == requests_.end() || count < 0) return;
  it->second.output = count;
  reweigh(it->second);
}

void EnergyLedger::end(RequestId id, double time_s) {
  auto it = requests_.find(id);
  if (it == requests_.end() || it->second.end_s >= 0) return;
  it->second.end_s = std::max(time_s, it->second.start_s);
  reweigh(it->second);  // its weights are final now
  if (--in_flight_ == 0) {
    const double from = sampled_ ? std::max(busy_since_s_, last_time_s_) : busy_since_s_;
    if (sampled_) busy_s_ += std::max(0.0, it->second.end_s - from);
  }
}

void EnergyLedger::sample(double time_s, double energy_j) {
  if (!sampled_) {
    sampled_ = true;
    last_time_s_ = time_s;
    last_energy_j_ = energy_j;
    busy_since_s_ = time_s;
    busy_s_ = 0;
    // Requests that ended before the first reading are settled with nothing to share.
  } else {
    const double from_s = last_time_s_;
    const double to_s = std::max(time_s, from_s);
    const double dt = to_s - from_s;
    const double energy = std::max(0.0, energy_j - last_energy_j_);
    last_time_s_ = to_s;
    last_energy_j_ = energy_j;
    if (in_flight_ > 0) {
      busy_s_ += to_s - std::max(busy_since_s_, from_s);
      busy_since_s_ = to_s;
    }
    const double busy_fraction =
        dt > 0 ? std::clamp(busy_s_ / dt, 0.0, 1.0) : (busy_s_ > 0 ? 1 : 0);
    busy_s_ = 0;
    measured_j_ += energy;
    Interval interval;
    interval.remaining_j = energy * busy_fraction;
    const uint64_t seq = first_seq_ + intervals_.size();
    for (auto& [id, request] : requests_) {
      const double end_s = request.end_s < 0 ? to_s : request.end_s;
      const bool inside = request.start_s < to_s && end_s > from_s;
      const bool instant = request.start_s == end_s && end_s > from_s && end_s <= to_s;
      if (!inside && !instant) continue;
      const double overlap =
          std::max(0.0, std::min(end_s, to_s) - std::max(request.start_s, from_s));
      Part part{id, overlap, request.tokens_since_sample, request.first_token_since_sample};
      part.weight = known_weight(part, request);
      interval.count(part, +1);
      request.parts.emplace_back(seq, static_cast<uint32_t>(interval.parts.size()));
      interval.parts.push_back(part);
      request.tokens_since_sample = 0;
      request.first_token_since_sample = false;
    }
    interval.untaken = interval.parts.size();
    if (interval.parts.empty()) {
      idle_j_ += energy;  // in flight by the clock, yet no request overlaps: nothing to charge
    } else {
      idle_j_ += energy - interval.remaining_j;
      intervals_.push_back(std::move(interval));
    }
  }
  // Every request that has ended is settled now: its last interval is closed.
  std::vector<RequestId> ended;
  for (const auto& [id, request] : requests_) {
    if (request.end_s >= 0 && request.end_s <= last_time_s_) ended.push_back(id);
  }
  std::sort(ended.begin(), ended.end());
  for (RequestId id : ended) {
    RequestEnergy out;
    out.id = id;
    settle(requests_.at(id), &out);
    finished_.push_back(std::move(out));
    requests_.erase(id);
  }
  while (!intervals_.empty() && intervals_.front().untaken == 0) {
    intervals_.pop_front();
    ++first_seq_;
  }
}

double EnergyLedger::known_weight(const Part& part, const Request& request) const {
  const double prompt = request.prompt >= 0
                            ? static_cast<double>(request.prompt) * options_.prompt_token_weight
                            : 0.0;
  if (request.streamed) {
    double scale = 1;
    if (request.end_s >= 0 && request.output >= 0 && request.counted > 0) {
      scale = static_cast<double>(request.output) / static_cast<double>(request.counted);
    }
    return part.tokens * scale + (part.first_token_here ? prompt : 0.0);
  }
  if (request.end_s < 0 || request.output < 0) return -1;  // known at its end
  const double life_s = request.end_s - request.start_s;
  const double share_of_life = life_s > 0 ? part.overlap_s / life_s : 1.0;
  return (static_cast<double>(request.output) + prompt) * share_of_life;
}

// Its share of each interval it lived in, from the interval's sums: O(1) per interval.
void EnergyLedger::settle(Request& request, RequestEnergy* out) {
  out->prompt_tokens = request.prompt;
  out->output_tokens = request.output >= 0 ? request.output : request.counted;
  for (const auto& [seq, index] : request.parts) {
    if (seq < first_seq_) continue;
    Interval& interval = intervals_[seq - first_seq_];
    Part& self = interval.parts[index];
    if (self.taken) continue;
    // Unknown weights: the known ones' mean weight per second, times the time in flight.
    const double known_sum = interval.positive > 0 ? interval.known_sum : 0.0;
    // (the sums of times carry float residue: below a picosecond is none)
    const double rate =
        interval.known_overlap_s > 1e-12 ? known_sum / interval.known_overlap_s : 0.0;
    double sum = known_sum + rate * interval.unknown_overlap_s;
    double mine = self.weight < 0 ? rate * self.overlap_s : self.weight;
    int* mode = interval.unknown > 0 ? &request.shares_mixed : &request.shares_known;
    if (!(sum > 0)) {  // nothing known (or all zero): by time in the interval, else equally
      mode = &request.shares_equal;
      const bool timed = interval.total_overlap_s > 1e-12;
      sum = timed ? interval.total_overlap_s : static_cast<double>(interval.untaken);
      mine = timed ? self.overlap_s : 1.0;
    }
    const double share =
        interval.untaken == 1 ? interval.remaining_j : interval.remaining_j * (mine / sum);
    interval.remaining_j -= share;
    if (interval.untaken == 1) interval.remaining_j = 0;
    interval.count(self, -1);
    self.taken = true;
    --interval.untaken;
    request.energy_j += share;
    attributed_j_ += share;
    ++*mode;
  }
  out->energy_j = request.energy_j;
  const int shares = request.shares_known + request.shares_equal + request.shares_mixed;
  out->method = shares == 0                      ? "none"
                : request.shares_known == shares ? "tokens"
                : request.shares_equal == shares ? "equal"
                                                 : "mixed";
}

std::vector<RequestEnergy> EnergyLedger::take_finished() {
  std::vector<RequestEnergy> out;
  out.swap(finished_);
  return out;
}

}  // namespace zeus::proxy
