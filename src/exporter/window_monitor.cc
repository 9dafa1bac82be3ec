#include "exporter/window_monitor.h"

#include <utility>

namespace zeus::exporter {

Result<std::unique_ptr<EnergyMonitor>> window_monitor(Devices& devices, Clock& clock,
                                                      std::optional<std::vector<int>> gpu_indices,
                                                      std::optional<std::vector<int>> cpu_indices,
                                                      std::function<void()> sync) {
  EnergyMonitorOptions options;
  options.gpu_indices = std::move(gpu_indices);
  options.cpu_indices = std::move(cpu_indices);
  options.sync = std::move(sync);
  return EnergyMonitor::create(devices, clock, std::move(options));
}

}  // namespace zeus::exporter
