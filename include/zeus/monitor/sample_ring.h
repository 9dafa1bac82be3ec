// SampleRing: a bounded, time-ordered ring of one device's readings, as the samplers keep them
// (power in PowerSampler, temperature in TemperatureMonitor); its memory grows with the samples
// up to the capacity, never allocated ahead.
//
// A run of identical readings keeps only its first and last sample (the last one's time moves
// forward), so a timeline stays exact while a constant reading costs two slots. When full, the
// oldest sample is overwritten and `dropped` is set. `Value` points to the member compared.
// Thread-safety: none; the owner guards it.
//
// Beside it, the queries both samplers answer the same way on a time-ordered copy: the sample
// closest to a time, the samples within a time range, and the error for a device not monitored.
//
//   SampleRing<PowerSample, &PowerSample::power_w> ring(1024);
//   ring.push({0.0, 100.0});
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "zeus/common/result.h"

namespace zeus {

template <typename Sample, auto Value>
struct SampleRing {
  // The buffer grows as samples come, up to `capacity` (a large cap costs nothing until used).
  explicit SampleRing(size_t capacity = 2) : capacity(std::max<size_t>(capacity, 1)) {}

  size_t capacity;
  std::vector<Sample> buffer;
  size_t head = 0;  // index of the oldest sample
  size_t size = 0;
  bool dropped = false;             // true once a sample was overwritten
  bool read_failed_logged = false;  // the owner's "logged once" flag

  const Sample& at(size_t i) const { return buffer[(head + i) % buffer.size()]; }
  Sample& at(size_t i) { return buffer[(head + i) % buffer.size()]; }

  void push(const Sample& sample) {
    if (size >= 2 && at(size - 1).*Value == sample.*Value && at(size - 2).*Value == sample.*Value) {
      at(size - 1).time_s = sample.time_s;
      return;
    }
    if (size < capacity) {  // not full yet: the buffer holds exactly the samples, oldest first
      if (buffer.size() == buffer.capacity()) {
        buffer.reserve(std::min(capacity, std::max<size_t>(16, 2 * buffer.size())));
      }
      buffer.push_back(sample);
      ++size;
      return;
    }
    buffer[head] = sample;
    head = (head + 1) % buffer.size();
    dropped = true;
  }

  // A copy, oldest first.
  std::vector<Sample> copy() const {
    std::vector<Sample> out;
    out.reserve(size);
    for (size_t i = 0; i < size; ++i) out.push_back(at(i));
    return out;
  }
};

// The sample of `samples` (time-ordered) closest to `time_s`, the earlier one on a tie (Zeus's
// rule for get_power(time) and get_temperature(time)); nullopt when empty or when `time_s` lies
// outside [first sample, newest sample + slack_s] (nothing was sampled then).
template <typename Sample>
std::optional<Sample> closest_sample(const std::vector<Sample>& samples, double time_s,
                                     double slack_s = 0.0) {
  if (samples.empty() || time_s < samples.front().time_s ||
      time_s > samples.back().time_s + slack_s) {
    return std::nullopt;
  }
  auto after = std::lower_bound(samples.begin(), samples.end(), time_s,
                                [](const Sample& s, double t) { return s.time_s < t; });
  if (after == samples.begin()) return *after;
  if (after == samples.end()) return samples.back();
  const Sample& before = *(after - 1);
  return time_s - before.time_s <= after->time_s - time_s ? before : *after;
}

// Keeps the samples with time in [start_s, end_s] (nullopt: unbounded); InvalidArgument when
// start_s > end_s. Two neighbouring samples with the same reading (`Value`) are the ends of a run
// the ring kept as two (see above): the reading held between them, so a window that starts or
// ends inside a run gets a sample at its edge with that reading (a constant power's window is
// never empty, and its timeline covers the window).
template <auto Value, typename Sample>
Result<std::vector<Sample>> samples_between(std::vector<Sample> samples,
                                            std::optional<double> start_s,
                                            std::optional<double> end_s) {
  if (start_s && end_s && *start_s > *end_s) {
    return fail(ErrorCode::kInvalidArgument, "the timeline's start time is after its end time");
  }
  // The run around time t, if t falls strictly inside one: the sample to copy.
  const auto inside_run = [&](double t) -> std::optional<Sample> {
    auto after = std::upper_bound(samples.begin(), samples.end(), t,
                                  [](double time, const Sample& s) { return time < s.time_s; });
    if (after == samples.begin() || after == samples.end()) return std::nullopt;
    const Sample& before = *(after - 1);
    if (before.time_s == t || !(before.*Value == (*after).*Value)) return std::nullopt;
    Sample edge = before;
    edge.time_s = t;
    return edge;
  };
  const std::optional<Sample> first = start_s ? inside_run(*start_s) : std::nullopt;
  const std::optional<Sample> last = end_s ? inside_run(*end_s) : std::nullopt;
  std::erase_if(samples, [&](const Sample& s) {
    return (start_s && s.time_s < *start_s) || (end_s && s.time_s > *end_s);
  });
  if (first) samples.insert(samples.begin(), *first);
  if (last && !(first && last->time_s == first->time_s)) samples.push_back(*last);
  return samples;
}

// ok() when `index` is in `monitored`, else NotFound listing the monitored devices, named by
// `what` ("GPU", "CPU package").
inline Result<void> check_monitored_device(const std::string& what, int index,
                                           const std::vector<int>& monitored) {
  if (std::find(monitored.begin(), monitored.end(), index) != monitored.end()) return ok();
  std::string listed;
  for (int i : monitored) listed += (listed.empty() ? "" : ", ") + std::to_string(i);
  return fail(ErrorCode::kNotFound, what + " " + std::to_string(index) +
                                        " is not monitored; monitored " + what + "s are [" +
                                        listed + "]");
}

inline Result<void> check_monitored_gpu(int index, const std::vector<int>& monitored) {
  return check_monitored_device("GPU", index, monitored);
}

}  // namespace zeus
