#include "zeus/monitor/power_sampler.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "zeus/common/log.h"

namespace zeus {
namespace {

// The longest single sleep of the thread, so that stop() returns promptly.
constexpr double kMaxSleepChunkS = 0.02;

double interpolate(const PowerSample& a, const PowerSample& b, double t_s) {
  if (b.time_s <= a.time_s) return b.power_w;
  return a.power_w + (b.power_w - a.power_w) * (t_s - a.time_s) / (b.time_s - a.time_s);
}

}  // namespace

PowerSampler::PowerSampler(Clock& clock, std::map<int, Gpu*> gpus, PowerSamplerOptions options)
    : PowerSampler(clock, std::move(gpus), {}, std::move(options)) {}

PowerSampler::PowerSampler(Clock& clock, std::map<int, Gpu*> gpus, std::map<int, Cpu*> cpus,
                           PowerSamplerOptions options)
    : clock_(clock), gpus_(std::move(gpus)), cpus_(std::move(cpus)), options_(std::move(options)) {
  ZEUS_CHECK(options_.interval_s > 0.0, "PowerSamplerOptions::interval_s must be > 0");
  ZEUS_CHECK(options_.capacity >= 2, "PowerSamplerOptions::capacity must be >= 2");
  ZEUS_CHECK(!options_.domains.empty(), "PowerSamplerOptions::domains must not be empty");
  for (const auto& [index, gpu] : gpus_) ZEUS_CHECK(gpu != nullptr, "PowerSampler got a null Gpu");
  for (const auto& [index, cpu] : cpus_) ZEUS_CHECK(cpu != nullptr, "PowerSampler got a null Cpu");
  for (PowerDomain domain : options_.domains) {
    if (is_cpu_power_domain(domain)) {
      for (const auto& [index, cpu] : cpus_) {
        rings_.emplace(std::make_pair(domain, index), Ring(options_.capacity));
      }
    } else {
      for (const auto& [index, gpu] : gpus_) {
        rings_.emplace(std::make_pair(domain, index), Ring(options_.capacity));
      }
    }
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
    for (PowerDomain domain : options_.domains) {
      if (is_cpu_power_domain(domain)) continue;
      auto power_mw = read_power_mw(*gpu, domain);
      const double time_s = clock_.now_s();
      Result<double> power_w =
          power_mw ? Result<double>(*power_mw / 1000.0) : Result<double>(fail(power_mw.error()));
      auto recorded = record(domain, index, power_w, time_s, from_thread);
      if (result && !recorded) result = recorded;
    }
  }
  auto cpus = sample_cpus(from_thread);
  if (result && !cpus) result = cpus;
  return result;
}

Result<void> PowerSampler::sample_cpus(bool from_thread) {
  Result<void> result = ok();
  for (const auto& [index, cpu] : cpus_) {
    for (PowerDomain domain : options_.domains) {
      if (!is_cpu_power_domain(domain)) continue;
      auto energy_uj = read_cpu_energy_uj(*cpu, domain);
      const double time_s = clock_.now_s();
      if (!energy_uj) {
        auto recorded = record(domain, index, fail(energy_uj.error()), time_s, from_thread);
        if (result && !recorded) result = recorded;
        continue;
      }
      const EnergyReading now{time_s, *energy_uj};
      auto [it, first] = last_energy_.try_emplace({domain, index}, now);
      if (first) continue;  // the baseline of the next sample
      const EnergyReading before = it->second;
      // A read soon after the last one (a sample_once() beside the thread's tick) would divide
      // one counter update by a tiny interval (a 0.2 J step over 1 ms reads 200 W): the baseline
      // stays, so the next sample averages over the whole time and no energy is lost.
      if (now.time_s >= before.time_s && now.energy_uj >= before.energy_uj &&
          now.time_s - before.time_s < options_.interval_s / 2) {
        continue;
      }
      it->second = now;
      // A counter that went backwards (not a wrap: the Cpu corrects those) restarts the baseline.
      if (now.time_s <= before.time_s || now.energy_uj < before.energy_uj) continue;
      const double power_w = static_cast<double>(now.energy_uj - before.energy_uj) / 1e6 /
                             (now.time_s - before.time_s);
      (void)record(domain, index, power_w, time_s, from_thread);
    }
  }
  return result;
}

Result<void> PowerSampler::record(PowerDomain domain, int index, const Result<double>& power_w,
                                  double time_s, bool from_thread) {
  bool log_failure = false;
  {
    std::lock_guard<std::mutex> data_lock(data_mutex_);
    Ring& ring = rings_.at({domain, index});
    if (power_w) {
      ring.push({time_s, *power_w});
      return ok();
    }
    log_failure = from_thread && !ring.read_failed_logged;
    if (from_thread) ring.read_failed_logged = true;
  }
  if (log_failure) {
    log_warning("power sampler: reading the " + power_domain_name(domain) + " power of " +
                (is_cpu_power_domain(domain) ? "CPU " : "GPU ") + std::to_string(index) +
                " failed (" + power_w.error().to_string() +
                "); its samples are skipped until reads succeed");
  }
  return fail(power_w.error());
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

const PowerSampler::Ring* PowerSampler::find_ring(int gpu_index,
                                                  std::optional<PowerDomain> domain) const {
  auto it = rings_.find({domain.value_or(options_.domains.front()), gpu_index});
  return it == rings_.end() ? nullptr : &it->second;
}

std::string PowerSampler::describe(int gpu_index, std::optional<PowerDomain> domain) const {
  const PowerDomain resolved = domain.value_or(options_.domains.front());
  if (is_cpu_power_domain(resolved)) {
    return "CPU " + std::to_string(gpu_index) + " (" + power_domain_name(resolved) + ")";
  }
  std::string text = "GPU " + std::to_string(gpu_index);
  if (domain && *domain != options_.domains.front()) {
    text += " (" + power_domain_name(*domain) + ")";
  }
  return text;
}

bool PowerSampler::has_samples_in(int gpu_index, double t0_s, double t1_s,
                                  std::optional<PowerDomain> domain) const {
  std::lock_guard<std::mutex> lock(data_mutex_);
  const Ring* ring = find_ring(gpu_index, domain);
  return ring != nullptr && overlaps(*ring, t0_s, t1_s);
}

std::optional<std::pair<double, double>> PowerSampler::span_s(
    int gpu_index, std::optional<PowerDomain> domain) const {
  std::lock_guard<std::mutex> lock(data_mutex_);
  const Ring* ring = find_ring(gpu_index, domain);
  if (ring == nullptr || ring->size == 0) return std::nullopt;
  return std::make_pair(ring->at(0).time_s, ring->at(ring->size - 1).time_s);
}

Result<double> PowerSampler::energy_j(int gpu_index, double t0_s, double t1_s,
                                      std::optional<PowerDomain> domain) const {
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
  const Ring* found = find_ring(gpu_index, domain);
  if (found == nullptr) {
    return fail(ErrorCode::kNotFound,
                "the power sampler does not sample " + describe(gpu_index, domain) +
                    " (sampled domains: " + power_domain_list(options_.domains) + ")");
  }
  const Ring& ring = *found;
  if (ring.size == 0) {
    return fail(ErrorCode::kUnavailable, "no power samples of " + describe(gpu_index, domain) +
                                             " yet; start() the sampler or call sample_once()");
  }
  if (!overlaps(ring, t0_s, t1_s)) {
    return fail(ErrorCode::kUnavailable, "no power samples of " + describe(gpu_index, domain) +
                                             " in [" + std::to_string(t0_s) + ", " +
                                             std::to_string(t1_s) + "] s: they span [" +
                                             std::to_string(ring.at(0).time_s) + ", " +
                                             std::to_string(ring.at(ring.size - 1).time_s) + "] s");
  }
  if (ring.dropped && t0_s < ring.at(0).time_s) {
    return fail(ErrorCode::kUnavailable,
                "the range starts at " + std::to_string(t0_s) + " s, before the oldest sample " +
                    "still kept of " + describe(gpu_index, domain) + " (" +
                    std::to_string(ring.at(0).time_s) + " s); raise PowerSamplerOptions::capacity");
  }
  return integrate(ring, t0_s, t1_s);
}

Result<PowerSample> PowerSampler::latest(int gpu_index, std::optional<PowerDomain> domain) const {
  std::lock_guard<std::mutex> lock(data_mutex_);
  const Ring* ring = find_ring(gpu_index, domain);
  if (ring == nullptr) {
    return fail(ErrorCode::kNotFound,
                "the power sampler does not sample " + describe(gpu_index, domain));
  }
  if (ring->size == 0) {
    return fail(ErrorCode::kUnavailable, "no power samples of " + describe(gpu_index, domain));
  }
  return ring->at(ring->size - 1);
}

std::vector<PowerSample> PowerSampler::samples(int gpu_index,
                                               std::optional<PowerDomain> domain) const {
  std::lock_guard<std::mutex> lock(data_mutex_);
  const Ring* ring = find_ring(gpu_index, domain);
  if (ring == nullptr) return {};
  return ring->copy();
}

std::vector<int> PowerSampler::gpu_indices() const {
  std::vector<int> out;
  for (const auto& [index, gpu] : gpus_) out.push_back(index);
  return out;
}

std::vector<int> PowerSampler::cpu_indices() const {
  std::vector<int> out;
  for (const auto& [index, cpu] : cpus_) out.push_back(index);
  return out;
}

}  // namespace zeus
