// The EnergyMonitor behind a window metric (zeus/exporter/metric.h): one measuring the given GPUs
// and CPU
// packages (nullopt: every one) with the metric's sync callback, the monitor's other options at
// their defaults. Thread-safety: as EnergyMonitor::create.
//
//   auto monitor = exporter::window_monitor(devices, clock, options.gpu_indices,
//                                           options.cpu_indices, options.sync);
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/monitor/energy_monitor.h"

namespace zeus::exporter {

// EnergyMonitor::create's errors (NotFound for an unknown GPU index, ...).
Result<std::unique_ptr<EnergyMonitor>> window_monitor(Devices& devices, Clock& clock,
                                                      std::optional<std::vector<int>> gpu_indices,
                                                      std::optional<std::vector<int>> cpu_indices,
                                                      std::function<void()> sync);

}  // namespace zeus::exporter
