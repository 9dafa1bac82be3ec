#include "exporter/metric_families.h"

#include <prometheus/text_serializer.h>

#include "exporter/client_metric.h"

namespace zeus {
namespace exporter {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

ClientMetric gpu_metric(const GpuEnergyReading& gpu, double value, MetricType type) {
  return client_metric({{"gpu", std::to_string(gpu.gpu)}, {"model", gpu.model}, {"uuid", gpu.uuid}},
                       value, type);
}

}  // namespace

std::vector<MetricFamily> metric_families(const EnergySnapshot& snapshot) {
  MetricFamily gpu_energy{"zeus_gpu_energy_joules_total",
                          "GPU energy in joules (the driver's counter, or integrated power)",
                          MetricType::Counter,
                          {}};
  MetricFamily gpu_power{
      "zeus_gpu_power_watts", "GPU instant power draw in watts", MetricType::Gauge, {}};
  MetricFamily gpu_limit{
      "zeus_gpu_power_limit_watts", "GPU power limit in watts", MetricType::Gauge, {}};
  MetricFamily cpu_energy{"zeus_cpu_energy_joules_total",
                          "CPU package or DRAM energy in joules (RAPL) since the exporter started",
                          MetricType::Counter,
                          {}};
  for (const auto& gpu : snapshot.gpus) {
    if (gpu.energy_j)
      gpu_energy.metric.push_back(gpu_metric(gpu, *gpu.energy_j, MetricType::Counter));
    if (gpu.power_w) gpu_power.metric.push_back(gpu_metric(gpu, *gpu.power_w, MetricType::Gauge));
    if (gpu.power_limit_w)
      gpu_limit.metric.push_back(gpu_metric(gpu, *gpu.power_limit_w, MetricType::Gauge));
  }
  for (const auto& cpu : snapshot.cpus) {
    cpu_energy.metric.push_back(
        client_metric({{"package", std::to_string(cpu.package)}, {"zone", cpu.zone}}, cpu.energy_j,
                      MetricType::Counter));
  }
  std::vector<MetricFamily> families;
  for (auto* family : {&gpu_energy, &gpu_power, &gpu_limit, &cpu_energy}) {
    if (!family->metric.empty()) families.push_back(std::move(*family));
  }
  return families;
}

}  // namespace exporter

std::string prometheus_text(const EnergySnapshot& snapshot) {
  return prometheus::TextSerializer().Serialize(exporter::metric_families(snapshot));
}

}  // namespace zeus
