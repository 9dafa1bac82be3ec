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

void EnergyLedger::prompt_tokens(RequestId id, int64_t count) {
  auto it = requests_.find(id);
  if (it != requests_.end() && count >= 0) it->second.prompt = count;
}

void EnergyLedger::output_tokens(RequestId id, int64_t count) {
  auto it = requests_.find(id);
  if (it != requests_.end() && count >= 0) it->second.output = count;
}

void EnergyLedger::end(RequestId id, double time_s) {
  auto it = requests_.find(id);
  if (it == requests_.end() || it->second.end_s >= 0) return;
  it->second.end_s = std::max(time_s, it->second.start_s);
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
    Interval interval{energy * busy_fraction, 0, {}};
    for (auto& [id, request] : requests_) {
      const double end_s = request.end_s < 0 ? to_s : request.end_s;
      const bool inside = request.start_s < to_s && end_s > from_s;
      const bool instant = request.start_s == end_s && end_s > from_s && end_s <= to_s;
      if (!inside && !instant) continue;
      const double overlap =
          std::max(0.0, std::min(end_s, to_s) - std::max(request.start_s, from_s));
      interval.parts.push_back(
          Part{id, overlap, request.tokens_since_sample, request.first_token_since_sample});
      request.tokens_since_sample = 0;
      request.first_token_since_sample = false;
      if (request.first_interval == UINT64_MAX) {
        request.first_interval = first_seq_ + intervals_.size();
      }
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
    settle(id, requests_.at(id));
    requests_.erase(id);
  }
  while (!intervals_.empty() && intervals_.front().untaken == 0) {
    intervals_.pop_front();
    ++first_seq_;
  }
}

double EnergyLedger::known_weight(const Part& part) const {
  const Request& request = requests_.at(part.id);
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

void EnergyLedger::settle(RequestId id, Request& request) {
  RequestEnergy out;
  out.id = id;
  out.prompt_tokens = request.prompt;
  out.output_tokens = request.output >= 0 ? request.output : request.counted;
  if (request.first_interval != UINT64_MAX) {
    for (uint64_t seq = std::max(request.first_interval, first_seq_);
         seq < first_seq_ + intervals_.size(); ++seq) {
      Interval& interval = intervals_[seq - first_seq_];
      Part* self = nullptr;
      double known_sum = 0, known_overlap_s = 0, total_overlap_s = 0;
      bool any_unknown = false;
      std::vector<double> weights(interval.parts.size(), 0.0);
      for (size_t i = 0; i < interval.parts.size(); ++i) {
        Part& part = interval.parts[i];
        if (part.id == id && !part.taken) self = &part;
        if (part.taken) continue;
        total_overlap_s += part.overlap_s;
        weights[i] = known_weight(part);
        if (weights[i] < 0) {
          any_unknown = true;
        } else {
          known_sum += weights[i];
          known_overlap_s += part.overlap_s;
        }
      }
      if (self == nullptr) continue;
      // Unknown weights: the known ones' mean weight per second, times the time in flight.
      const double rate = known_overlap_s > 0 ? known_sum / known_overlap_s : 0;
      double sum = 0, mine = 0;
      for (size_t i = 0; i < interval.parts.size(); ++i) {
        const Part& part = interval.parts[i];
        if (part.taken) continue;
        const double w = weights[i] < 0 ? rate * part.overlap_s : weights[i];
        sum += w;
        if (&part == self) mine = w;
      }
      int* mode = any_unknown ? &request.shares_mixed : &request.shares_known;
      if (!(sum > 0)) {  // nothing known (or all zero): by time in the interval, else equally
        mode = &request.shares_equal;
        sum = total_overlap_s > 0 ? total_overlap_s : static_cast<double>(interval.untaken);
        mine = total_overlap_s > 0 ? self->overlap_s : 1.0;
      }
      const double share =
          interval.untaken == 1 ? interval.remaining_j : interval.remaining_j * (mine / sum);
      interval.remaining_j -= share;
      if (interval.untaken == 1) interval.remaining_j = 0;
      self->taken = true;
      --interval.untaken;
      request.energy_j += share;
      attributed_j_ += share;
      ++*mode;
    }
  }
  out.energy_j = request.energy_j;
  const int shares = request.shares_known + request.shares_equal + request.shares_mixed;
  out.method = shares == 0                      ? "none"
               : request.shares_known == shares ? "tokens"
               : request.shares_equal == shares ? "equal"
                                                : "mixed";
  finished_.push_back(std::move(out));
}

std::vector<RequestEnergy> EnergyLedger::take_finished() {
  std::vector<RequestEnergy> out;
  out.swap(finished_);
  return out;
}

}  // namespace zeus::proxy
