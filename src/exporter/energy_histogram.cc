// EnergyHistogram (zeus/exporter/metric.h): one histogram observation per ended window and device.
#include <prometheus/histogram.h>

#include <sstream>

#include "exporter/pushed_registry.h"
#include "exporter/window_monitor.h"
#include "zeus/exporter/metric.h"

namespace zeus {
namespace {

using prometheus::Family;
using prometheus::Histogram;

const std::string kHistogramWindowPrefix = "__EnergyHistogram_";

struct Kind {
  const char* what;  // "GPU", "CPU", "DRAM"
  Family<Histogram>* family = nullptr;
  Histogram::BucketBoundaries buckets;
};

class EnergyHistogramImpl final : public EnergyHistogram {
 public:
  EnergyHistogramImpl(std::unique_ptr<EnergyMonitor> monitor,
                      std::unique_ptr<exporter::PushedRegistry> pushed,
                      const EnergyHistogramOptions& options)
      : monitor_(std::move(monitor)), pushed_(std::move(pushed)) {
    auto build = [&](const char* name, const char* help) -> Family<Histogram>& {
      return prometheus::BuildHistogram().Name(name).Help(help).Register(pushed_->registry());
    };
    gpu_ = {"GPU", nullptr, options.gpu_buckets_j};
    cpu_ = {"CPU", nullptr, options.cpu_buckets_j};
    dram_ = {"DRAM", nullptr, options.dram_buckets_j};
    if (!monitor_->gpu_indices().empty()) {
      gpu_.family = &build("energy_monitor_gpu_energy_joules", "GPU energy consumption");
    }
    if (!monitor_->cpu_indices().empty()) {
      cpu_.family = &build("energy_monitor_cpu_energy_joules", "CPU energy consumption");
      dram_.family = &build("energy_monitor_dram_energy_joules", "DRAM energy consumption");
    }
  }

  Result<void> begin_window(std::string_view name, bool sync) override {
    return monitor_->begin_window(kHistogramWindowPrefix + std::string(name), sync);
  }

  Result<HistogramWindow> end_window(std::string_view name, bool sync) override {
    auto measured = monitor_->end_window(kHistogramWindowPrefix + std::string(name), sync);
    if (!measured) return fail(measured.error());
    HistogramWindow window{*measured, {}};
    observe(gpu_, name, measured->gpu_energy_j, window.out_of_range);
    observe(cpu_, name, measured->cpu_energy_j, window.out_of_range);
    observe(dram_, name, measured->dram_energy_j, window.out_of_range);
    ZEUS_TRY(pushed_->push());
    return window;
  }

  const std::vector<int>& gpu_indices() const override { return monitor_->gpu_indices(); }
  const std::vector<int>& cpu_indices() const override { return monitor_->cpu_indices(); }

 private:
  static void observe(Kind& kind, std::string_view window, const std::map<int, double>& energy_j,
                      std::vector<std::string>& out_of_range) {
    if (kind.family == nullptr) return;
    for (const auto& [index, joules] : energy_j) {
      kind.family
          ->Add({{"window", std::string(window)}, {"index", std::to_string(index)}}, kind.buckets)
          .Observe(joules);
      const bool above = joules > kind.buckets.back();
      if (above || joules < kind.buckets.front()) {
        std::ostringstream line;
        line << kind.what << " " << index << " energy " << joules << " J of window '" << window
             << "' is " << (above ? "above the largest" : "below the smallest") << " bucket bound "
             << (above ? kind.buckets.back() : kind.buckets.front()) << " J";
        out_of_range.push_back(line.str());
      }
    }
  }

  std::unique_ptr<EnergyMonitor> monitor_;
  std::unique_ptr<exporter::PushedRegistry> pushed_;
  Kind gpu_, cpu_, dram_;
};

}  // namespace

Result<std::unique_ptr<EnergyHistogram>> EnergyHistogram::create(Devices& devices, Clock& clock,
                                                                 EnergyHistogramOptions options) {
  ZEUS_TRY(exporter::check_buckets(options.gpu_buckets_j, "GPU"));
  ZEUS_TRY(exporter::check_buckets(options.cpu_buckets_j, "CPU"));
  ZEUS_TRY(exporter::check_buckets(options.dram_buckets_j, "DRAM"));
  auto pushed = exporter::PushedRegistry::connect(options.pushgateway_url, options.job);
  if (!pushed) return fail(pushed.error());
  auto monitor = exporter::window_monitor(devices, clock, options.gpu_indices, options.cpu_indices,
                                          options.sync);
  if (!monitor) return fail(monitor.error());
  return std::unique_ptr<EnergyHistogram>(
      new EnergyHistogramImpl(std::move(*monitor), std::move(*pushed), options));
}

}  // namespace zeus
