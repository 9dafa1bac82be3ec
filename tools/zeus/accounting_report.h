// zeus measure --carbon / --price: the command's window charged by a provider
// (zeus/monitor/accounting_monitor.h), beside the plain measurement. The JSON, under "carbon" or
// "cost":
//   {"provider", "unit" ("gCO2eq", "$"), "complete", "gpu": {"0": x}, "cpu": {...},
//    "dram": {...}, "gpu_total", "total"[, "unknown_reason"]}
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "zeus/monitor/accounting_monitor.h"

namespace zeus::cli {

// One provider's monitor over the command (nullptr spec: none).
struct Accounting {
  std::string key;    // "carbon" or "cost"
  std::string label;  // "carbon", "cost"
  std::unique_ptr<AccountingMonitor> monitor;
};

// The provider named by `spec` (csv:..., electricitymaps:..., openei:...) over `devices`, with
// the energy monitor's options; dies with the provider's message when it cannot be made.
Accounting start_accounting(const std::string& key, const std::string& spec, Devices& devices,
                            Clock& clock, const EnergyMonitorOptions& options);

nlohmann::json accounted_json(const AccountedMeasurement& m, const std::string& provider);
void print_accounted(std::ostream& out, const std::string& label, const AccountedMeasurement& m,
                     const std::string& provider);

}  // namespace zeus::cli
