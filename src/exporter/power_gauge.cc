// PowerGauge (zeus/exporter/metric.h): per open window, a thread sets each GPU's instant power and
// pushes.
#include <prometheus/gauge.h>

#include <map>

#include "common/periodic_task.h"
#include "exporter/pushed_registry.h"
#include "zeus/common/log.h"
#include "zeus/exporter/metric.h"

namespace zeus {
namespace {

using prometheus::Family;
using prometheus::Gauge;

class PowerGaugeImpl final : public PowerGauge {
 public:
  PowerGaugeImpl(Devices& devices, std::vector<int> gpu_indices,
                 std::unique_ptr<exporter::PushedRegistry> pushed, double period_s)
      : devices_(devices),
        gpu_indices_(std::move(gpu_indices)),
        pushed_(std::move(pushed)),
        period_s_(period_s),
        family_(prometheus::BuildGauge()
                    .Name("power_monitor_gpu_power_watts")
                    .Help("Records power consumption for GPU over time")
                    .Register(pushed_->registry())) {}

  ~PowerGaugeImpl() override { windows_.clear(); }  // stops and joins every thread

  Result<void> begin_window(std::string_view name_view) override {
    const std::string name(name_view);
    if (windows_.count(name) != 0) {
      return fail(ErrorCode::kInvalidArgument,
                  "PowerGauge window '" + name + "' is open already: end it first");
    }
    ZEUS_TRY(update(name));
    windows_[name] = std::make_unique<PeriodicTask>(period_s_, [this, name] {
      auto updated = update(name);
      if (!updated) log_warning("PowerGauge: " + updated.error().message);
    });
    return ok();
  }

  Result<void> end_window(std::string_view name_view) override {
    auto window = windows_.find(std::string(name_view));
    if (window == windows_.end()) {
      return fail(ErrorCode::kNotFound,
                  "no PowerGauge window '" + std::string(name_view) + "' is open: begin it first");
    }
    windows_.erase(window);  // stops and joins its thread
    return ok();
  }

  const std::vector<int>& gpu_indices() const override { return gpu_indices_; }

 private:
  // Reads every GPU's instant power (a GPU that fails keeps its last value) and pushes.
  Result<void> update(const std::string& name) {
    std::string failures;
    for (int index : gpu_indices_) {
      auto power_mw = devices_.gpus[static_cast<size_t>(index)]->instant_power_mw();
      if (!power_mw) {
        failures += " GPU " + std::to_string(index) + ": " + power_mw.error().message + ";";
        continue;
      }
      family_.Add({{"window", name}, {"index", std::to_string(index)}})
          .Set(static_cast<double>(*power_mw) / 1000.0);
    }
    if (!failures.empty()) log_warning("PowerGauge: cannot read power of" + failures);
    return pushed_->push();
  }

  Devices& devices_;
  std::vector<int> gpu_indices_;
  std::unique_ptr<exporter::PushedRegistry> pushed_;
  double period_s_;
  Family<Gauge>& family_;
  std::map<std::string, std::unique_ptr<PeriodicTask>> windows_;  // the user's thread only
};

}  // namespace

Result<std::unique_ptr<PowerGauge>> PowerGauge::create(Devices& devices,
                                                       PowerGaugeOptions options) {
  ZEUS_TRY(exporter::check_update_period(options.update_period_s));
  std::vector<int> indices;
  if (options.gpu_indices) {
    for (int index : *options.gpu_indices) {
      if (index < 0 || static_cast<size_t>(index) >= devices.gpus.size()) {
        return fail(ErrorCode::kNotFound,
                    "GPU index " + std::to_string(index) + " is not among the " +
                        std::to_string(devices.gpus.size()) + " visible GPUs");
      }
      indices.push_back(index);
    }
  } else {
    for (size_t i = 0; i < devices.gpus.size(); ++i) indices.push_back(static_cast<int>(i));
  }
  auto pushed = exporter::PushedRegistry::connect(options.pushgateway_url, options.job);
  if (!pushed) return fail(pushed.error());
  return std::unique_ptr<PowerGauge>(
      new PowerGaugeImpl(devices, std::move(indices), std::move(*pushed), options.update_period_s));
}

}  // namespace zeus
