#include "zeus/power_sampler.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "zeus/log.h"

namespace zeus {
namespace {

// The longest single sleep of the thread, so that stop() returns promptly.
constexpr double kMaxSleepChunkS = 0.02;

double interpolate(const PowerSample& a, const PowerSample& b, double t_s) {
  if (b.time_s <= a.time_s) return b.power_w;
  return a.power_w + (b.power_w - a.power_w) * (t_s - a.time_s) / (b.time_s - a.time_s);
}

}  // namespace

void PowerSampler::Ring::push(const PowerSample& sample) {
  // A run of identical readings keeps only its first and last sample.
  if (size >= 2 && at(size - 1).power_w == sample.power_w &&
      at(size - 2).power_w == sample.power_w) {
    at(size - 1).time_s = sample.time_s;
    return;
  }
  if (size < buffer.size()) {
    at(size) = sample;
    ++size;
    return;
  }
  buffer[head] = sample;
  head = (head + 1) % buffer.size();
  dropped = true;
}

PowerSampler::PowerSampler(Clock& clock, std::map<int, Gpu*> gpus, PowerSamplerOptions options)
    : clock_(clock), gpus_(std::move(gpus)), options_(options) {
  ZEUS_CHECK(options_.interval_s > 0.0, "PowerSamplerOptions::interval_s must be > 0");
  ZEUS_CHECK(options_.capacity >= 2, "PowerSamplerOptions::capacity must be >= 2");
  for (const auto& [index, gpu] : gpus_) {
    ZEUS_CHECK(gpu != nullptr, "PowerSampler got a null Gpu");
    rings_[index].buffer.resize(options_.capacity);
  }
}

PowerSampler::~PowerSampler() { stop(); }

Result<void> PowerSampler::start() {
  if (running_.exchange(true)) {
    return fail(ErrorCode::kInvalidArgument, "the power sampler is already running");
  }
  stop_requested_.store(false);
  thread_ = std::thread([this] { run(); });
  return ok();
}

void PowerSampler::stop() {
  if (!running_.load()) return;
  stop_requested_.store(true);
  if (thread_.joinable()) thread_.join();
  running_.store(false);
}

void PowerSampler::run() {
  double next_s = clock_.now_s();
  while (true) {
    (void)sample_gpus(/*from_thread=*/true);  // at least once, even when stopped at once
    if (stop_requested_.load()) break;
    next_s += options_.interval_s;
    double now_s = clock_.now_s();
    if (next_s < now_s) next_s = now_s;  // fell behind: skip the missed ticks
    while (!stop_requested_.load() && now_s < next_s) {
      clock_.sleep_until_s(std::min(next_s, now_s + kMaxSleepChunkS));
      now_s = clock_.now_s();
    }
  }
}

Result<void> PowerSampler::sample_once() { return sample_gpus(/*from_thread=*/false); }

Result<void> PowerSampler::sample_gpus(bool from_thread) {
  std::lock_guard<std::mutex> sample_lock(sample_mutex_);
  Result<void> result = ok();
  for (const auto& [index, gpu] : gpus_) {
    auto power_mw = options_.use_average_power ? gpu->average_power_mw() : gpu->instant_power_mw();
    const double time_s = clock_.now_s();
    bool log_failure = false;
    {
      std::lock_guard<std::mutex> data_lock(data_mutex_);
      Ring& ring = rings_.at(index);
      if (power_mw) {
        ring.push({time_s, *power_mw / 1000.0});
        continue;
      }
      log_failure = from_thread && !ring.read_failed_logged;
      if (from_thread) ring.read_failed_logged = true;
    }
    if (log_failure) {
      log_warning("power sampler: reading the power of GPU " + std::to_string(index) +
                  " failed (" + power_mw.error().to_string() +
                  "); its samples are skipped until reads succeed");
    }
    if (result) result = fail(power_mw.error());
  }
  return result;
}

double PowerSampler::integrate(const Ring& ring, double t0_s, double t1_s) {
  const size_t n = ring.size;
  // Only the span the samples cover: nothing is extrapolated beyond it.
  t0_s = std::max(t0_s, ring.at(0).time_s);
  t1_s = std::min(t1_s, ring.at(n - 1).time_s);
  if (n < 2 || t1_s <= t0_s) return 0.0;
  // First sample at or after t0_s; the segment ending there is the first that overlaps.
  size_t lo = 0;
  size_t hi = n;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (ring.at(mid).time_s < t0_s) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  double energy_j = 0.0;
  for (size_t i = lo == 0 ? 0 : lo - 1; i + 1 < n; ++i) {
    const PowerSample& a = ring.at(i);
    const PowerSample& b = ring.at(i + 1);
    if (a.time_s >= t1_s) break;
    const double from_s = std::max(a.time_s, t0_s);
    const double to_s = std::min(b.time_s, t1_s);
    if (to_s <= from_s) continue;
    energy_j += 0.5 * (interpolate(a, b, from_s) + interpolate(a, b, to_s)) * (to_s - from_s);
  }
  return energy_j;
}

bool PowerSampler::overlaps(const Ring& ring, double t0_s, double t1_s) {
  return ring.size > 0 && t0_s <= ring.at(ring.size - 1).time_s && t1_s >= ring.at(0).time_s;
}

bool PowerSampler::has_samples_in(int gpu_index, double t0_s, double t1_s) const {
  std::lock_guard<std::mutex> lock(data_mutex_);
  auto it = rings_.find(gpu_index);
  return it != rings_.end() && overlaps(it->second, t0_s, t1_s);
}

std::optional<std::pair<double, double>> PowerSampler::span_s(int gpu_index) const {
  std::lock_guard<std::mutex> lock(data_mutex_);
  auto it = rings_.find(gpu_index);
  if (it == rings_.end() || it->second.size == 0) return std::nullopt;
  return std::make_pair(it->second.at(0).time_s, it->second.at(it->second.size - 1).time_s);
}

Result<double> PowerSampler::energy_j(int gpu_index, double t0_s, double t1_s) const {
  if (!std::isfinite(t0_s) || !std::isfinite(t1_s)) {
    return fail(ErrorCode::kInvalidArgument, "energy_j needs finite times, got [" +
                                                 std::to_string(t0_s) + ", " +
                                                 std::to_string(t1_s) + "]");
  }
  if (t1_s < t0_s) {
    return fail(ErrorCode::kInvalidArgument, "energy_j needs t0_s <= t1_s, got [" +
                                                 std::to_string(t0_s) + ", " +
                                                 std::to_string(t1_s) + "]");
  }
  std::lock_guard<std::mutex> lock(data_mutex_);
  auto it = rings_.find(gpu_index);
  if (it == rings_.end()) {
    return fail(ErrorCode::kNotFound,
                "the power sampler does not sample GPU " + std::to_string(gpu_index));
  }
  const Ring& ring = it->second;
  if (ring.size == 0) {
    return fail(ErrorCode::kUnavailable, "no power samples of GPU " + std::to_string(gpu_index) +
                                             " yet; start() the sampler or call sample_once()");
  }
  if (!overlaps(ring, t0_s, t1_s)) {
    return fail(ErrorCode::kUnavailable,
                "no power samples of GPU " + std::to_string(gpu_index) + " in [" +
                    std::to_string(t0_s) + ", " + std::to_string(t1_s) +
                    "] s: they span [" + std::to_string(ring.at(0).time_s) + ", " +
                    std::to_string(ring.at(ring.size - 1).time_s) + "] s");
  }
  if (ring.dropped && t0_s < ring.at(0).time_s) {
    return fail(ErrorCode::kUnavailable,
                "the range starts at " + std::to_string(t0_s) + " s, before the oldest sample " +
                    "still kept of GPU " + std::to_string(gpu_index) + " (" +
                    std::to_string(ring.at(0).time_s) +
                    " s); raise PowerSamplerOptions::capacity");
  }
  return integrate(ring, t0_s, t1_s);
}

Result<PowerSample> PowerSampler::latest(int gpu_index) const {
  std::lock_guard<std::mutex> lock(data_mutex_);
  auto it = rings_.find(gpu_index);
  if (it == rings_.end()) {
    return fail(ErrorCode::kNotFound,
                "the power sampler does not sample GPU " + std::to_string(gpu_index));
  }
  if (it->second.size == 0) {
    return fail(ErrorCode::kUnavailable, "no power samples of GPU " + std::to_string(gpu_index));
  }
  return it->second.at(it->second.size - 1);
}

std::vector<PowerSample> PowerSampler::samples(int gpu_index) const {
  std::lock_guard<std::mutex> lock(data_mutex_);
  std::vector<PowerSample> out;
  auto it = rings_.find(gpu_index);
  if (it == rings_.end()) return out;
  out.reserve(it->second.size);
  for (size_t i = 0; i < it->second.size; ++i) out.push_back(it->second.at(i));
  return out;
}

std::vector<int> PowerSampler::gpu_indices() const {
  std::vector<int> out;
  for (const auto& [index, gpu] : gpus_) out.push_back(index);
  return out;
}

}  // namespace zeus
