#include "device/jetson/jetson_soc.h"

#include <chrono>
#include <utility>

#include "zeus/common/log.h"

namespace zeus {

JetsonSoc::JetsonSoc(std::vector<JetsonRail> rails, Clock& clock)
    : rails_(std::move(rails)),
      clock_(clock),
      energy_mj_(rails_.size(), 0.0),
      last_power_mw_(rails_.size(), 0.0) {}

Result<std::unique_ptr<JetsonSoc>> JetsonSoc::open(std::vector<JetsonRail> rails, Clock& clock) {
  if (rails.empty()) return fail(ErrorCode::kInvalidArgument, "a Jetson SoC needs a rail");
  std::unique_ptr<JetsonSoc> soc(new JetsonSoc(std::move(rails), clock));
  std::lock_guard<std::mutex> lock(soc->mutex_);
  for (size_t i = 0; i < soc->rails_.size(); ++i) {
    auto power = read_jetson_rail_mw(soc->rails_[i]);
    if (!power) return fail(power.error());
    soc->last_power_mw_[i] = *power;
  }
  soc->last_s_ = clock.now_s();
  return soc;
}

JetsonSoc::~JetsonSoc() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (sampler_.joinable()) sampler_.join();
}

std::vector<std::string> JetsonSoc::rail_descriptions() const {
  std::vector<std::string> out;
  for (const auto& rail : rails_)
    out.push_back(jetson_rail_kind_name(rail.kind) + ": " + rail.label);
  return out;
}

Result<void> JetsonSoc::sample_locked() {
  if (failure_) return fail(*failure_);
  std::vector<double> power_mw(rails_.size(), 0.0);
  for (size_t i = 0; i < rails_.size(); ++i) {
    auto power = read_jetson_rail_mw(rails_[i]);
    if (!power) {
      failure_ = power.error();
      return fail(power.error());
    }
    power_mw[i] = *power;
  }
  const double now_s = clock_.now_s();
  const double dt_s = now_s > last_s_ ? now_s - last_s_ : 0.0;
  for (size_t i = 0; i < rails_.size(); ++i) {
    energy_mj_[i] += (last_power_mw_[i] + power_mw[i]) / 2.0 * dt_s;
  }
  last_power_mw_ = std::move(power_mw);
  last_s_ = now_s;
  return ok();
}

Result<SocEnergyMj> JetsonSoc::energy_mj() {
  std::lock_guard<std::mutex> lock(mutex_);
  ZEUS_TRY(sample_locked());
  SocEnergyMj out;
  for (size_t i = 0; i < rails_.size(); ++i) {
    switch (rails_[i].kind) {
      case JetsonRailKind::kCpu:
        out.cpu_mj = energy_mj_[i];
        break;
      case JetsonRailKind::kGpu:
        out.gpu_mj = energy_mj_[i];
        break;
      case JetsonRailKind::kTotal:
        out.total_mj = energy_mj_[i];
        break;
    }
  }
  return out;
}

Result<void> JetsonSoc::start_sampling(double interval_s) {
  if (!(interval_s > 0.0)) {
    return fail(ErrorCode::kInvalidArgument, "the Jetson sampling interval must be > 0 s");
  }
  if (sampler_.joinable()) return ok();
  sampler_ = std::thread([this, interval_s] {
    const auto period = std::chrono::duration<double>(interval_s);
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
      auto sampled = sample_locked();
      if (!sampled) {
        log_warning("Jetson power sampling stopped: " + sampled.error().message);
        return;
      }
    }
  });
  return ok();
}

Result<std::unique_ptr<Soc>> open_jetson_soc(const std::string& sysfs_root, Clock& clock,
                                             double sample_interval_s) {
  auto rails = find_jetson_rails(sysfs_root);
  if (!rails) return fail(rails.error());
  auto soc = JetsonSoc::open(std::move(*rails), clock);
  if (!soc) return fail(soc.error());
  if (sample_interval_s > 0.0) ZEUS_TRY((*soc)->start_sampling(sample_interval_s));
  return std::unique_ptr<Soc>(std::move(*soc));
}

}  // namespace zeus
