// zeus devices: every GPU and CPU found, their capabilities, and why a backend was skipped.
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "commands.h"
#include "zeus/monitor/power_domain.h"

namespace zeus::cli {
namespace {

nlohmann::json watts_or_null(const Result<uint32_t>& mw) {
  if (!mw) return nullptr;
  return *mw / 1000.0;
}

nlohmann::json describe_gpu(int index, Gpu& gpu) {
  nlohmann::json j;
  j["index"] = index;
  j["physical_index"] = gpu.physical_index();
  j["name"] = gpu.name();
  j["uuid"] = gpu.uuid();
  j["vendor"] = vendor_name(gpu.vendor());
  j["backend"] = gpu.backend();
  j["architecture"] = architecture_name(gpu.architecture());
  j["power_scope"] = power_scope_name(gpu.power_scope());
  j["energy_counter"] = gpu.has_energy_counter();
  nlohmann::json limits;
  if (auto range = gpu.power_limit_range_mw()) {
    limits["min"] = range->min_mw / 1000.0;
    limits["max"] = range->max_mw / 1000.0;
  } else {
    limits["error"] = range.error().message;
  }
  limits["default"] = watts_or_null(gpu.default_power_limit_mw());
  limits["current"] = watts_or_null(gpu.power_limit_mw());
  j["power_limit_w"] = limits;
  j["power_w"] = watts_or_null(gpu.instant_power_mw());
  j["memory_power_w"] = watts_or_null(gpu.memory_average_power_mw());
  nlohmann::json domains = nlohmann::json::array();
  for (PowerDomain domain : supported_power_domains({&gpu})) {
    domains.push_back(power_domain_name(domain));
  }
  j["power_domains"] = domains;
  auto celsius = gpu.temperature_c();
  j["temperature_c"] = celsius ? nlohmann::json(*celsius) : nlohmann::json(nullptr);
  auto persistence = gpu.persistence_mode();
  j["persistence_mode"] = persistence ? nlohmann::json(*persistence) : nlohmann::json(nullptr);
  auto sm = gpu.supported_sm_clocks_mhz();
  j["sm_clocks_mhz"] = sm ? nlohmann::json(*sm) : nlohmann::json::array();
  auto memory = gpu.supported_memory_clocks_mhz();
  j["memory_clocks_mhz"] = memory ? nlohmann::json(*memory) : nlohmann::json::array();
  return j;
}

nlohmann::json describe_cpu(int index, Cpu& cpu) {
  nlohmann::json j;
  j["index"] = index;
  j["name"] = cpu.name();
  j["backend"] = "rapl";
  j["dram"] = cpu.has_dram();
  // What `zeus power --cpu` and PowerMonitor(cpu_indices=...) sample for this package.
  j["power_domains"] = nlohmann::json::array();
  for (PowerDomain domain : supported_cpu_power_domains({&cpu})) {
    j["power_domains"].push_back(power_domain_name(domain));
  }
  auto energy = cpu.package_energy_uj();
  j["readable"] = energy.has_value();
  if (!energy) j["error"] = energy.error().message;
  return j;
}

std::string range_text(const std::vector<uint32_t>& values, const char* unit) {
  if (values.empty()) return "-";
  uint32_t lo = values.front(), hi = values.front();
  for (uint32_t v : values) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return std::to_string(values.size()) + " steps, " + std::to_string(lo) + "-" +
         std::to_string(hi) + " " + unit;
}

std::string watts_text(const nlohmann::json& value) {
  return value.is_number() ? format_fixed(value.get<double>(), 0) + " W" : "-";
}

void print_text(const nlohmann::json& report) {
  if (report["gpus"].empty()) std::cout << "GPUs: none found\n";
  for (const auto& g : report["gpus"]) {
    std::cout << "GPU " << g["index"] << ": " << g["name"].get<std::string>() << " ("
              << g["architecture"].get<std::string>() << ", " << g["uuid"].get<std::string>()
              << ", physical index " << g["physical_index"] << ", "
              << g["backend"].get<std::string>() << ")\n";
    std::cout << "  energy counter   " << (g["energy_counter"].get<bool>() ? "yes" : "no (power is sampled)")
              << "\n";
    const auto& limits = g["power_limit_w"];
    if (limits.contains("error")) {
      std::cout << "  power limit      unavailable: " << limits["error"].get<std::string>() << "\n";
    } else {
      std::cout << "  power limit      " << watts_text(limits["current"]) << " (range "
                << watts_text(limits["min"]) << " - " << watts_text(limits["max"]) << ", default "
                << watts_text(limits["default"]) << ")\n";
    }
    std::cout << "  power draw       " << watts_text(g["power_w"]);
    if (g["memory_power_w"].is_number()) {
      std::cout << " (memory " << watts_text(g["memory_power_w"]) << ")";
    }
    std::cout << "\n";
    std::string domains;
    for (const auto& d : g["power_domains"]) {
      domains += (domains.empty() ? "" : ", ") + d.get<std::string>();
    }
    std::cout << "  power domains    " << (domains.empty() ? "-" : domains) << "\n";
    std::cout << "  power scope      " << g["power_scope"].get<std::string>()
              << (g["power_scope"] == "module"
                      ? " (the whole C2C module, CPU included: do not add its CPU's energy)"
                      : "")
              << "\n";
    std::cout << "  temperature      "
              << (g["temperature_c"].is_number()
                      ? std::to_string(g["temperature_c"].get<int>()) + " C"
                      : std::string("-"))
              << "\n";
    const auto& persistence = g["persistence_mode"];
    const char* mode = persistence.is_boolean() ? (persistence.get<bool>() ? "on" : "off") : "-";
    std::cout << "  persistence mode " << mode << "\n";
    std::cout << "  SM clocks        "
              << range_text(g["sm_clocks_mhz"].get<std::vector<uint32_t>>(), "MHz") << "\n";
    std::cout << "  memory clocks    "
              << range_text(g["memory_clocks_mhz"].get<std::vector<uint32_t>>(), "MHz") << "\n";
  }
  if (report["cpus"].empty()) std::cout << "CPUs: none measurable\n";
  for (const auto& c : report["cpus"]) {
    std::cout << "CPU " << c["index"] << ": " << c["name"].get<std::string>() << " (RAPL"
              << (c["dram"].get<bool>() ? ", with DRAM zone" : "") << ")";
    std::string domains;
    for (const auto& d : c["power_domains"]) {
      domains += (domains.empty() ? "" : ", ") + d.get<std::string>();
    }
    std::cout << "; power domains: " << domains;
    if (!c["readable"].get<bool>())
      std::cout << " - not readable: " << c["error"].get<std::string>();
    std::cout << "\n";
  }
  if (report["soc"].is_object()) {
    std::string rails;
    for (const auto& rail : report["soc"]["rails"]) {
      rails += (rails.empty() ? "" : ", ") + rail.get<std::string>();
    }
    std::cout << "SoC: " << report["soc"]["name"].get<std::string>() << " (rails " << rails
              << "; power integrated over time)\n";
  }
  std::cout << "Backends:\n";
  for (const auto& b : report["backends"]) {
    std::cout << "  " << b["backend"].get<std::string>() << ": "
              << (b["used"].get<bool>() ? "used, " : "not used, ") << b["detail"].get<std::string>()
              << "\n";
  }
}

}  // namespace

void add_devices_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "List the GPUs and CPUs Zeus can measure and control");
  cmd->footer(
      "GPUs are listed with the indices your framework uses (after CUDA_VISIBLE_DEVICES /\n"
      "HIP_VISIBLE_DEVICES, after ROCR_VISIBLE_DEVICES for AMD). Backends are tried in order\n"
      "nvml, amdsmi, rocm_smi; rapl for CPUs. Set ZEUS_NVML_PATH, ZEUS_AMDSMI_PATH,\n"
      "ZEUS_ROCM_SMI_PATH or ZEUS_POWERCAP_ROOT to point at other libraries/trees.\n"
      "Example: zeus devices --json | jq '.gpus[].power_limit_w'");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print one JSON object: {gpus, cpus, soc, backends}");
  cmd->callback([json] {
    Devices devices = discover_or_die();
    nlohmann::json report;
    report["gpus"] = nlohmann::json::array();
    report["cpus"] = nlohmann::json::array();
    report["backends"] = nlohmann::json::array();
    for (size_t i = 0; i < devices.gpus.size(); ++i) {
      report["gpus"].push_back(describe_gpu(static_cast<int>(i), *devices.gpus[i]));
    }
    for (size_t i = 0; i < devices.cpus.size(); ++i) {
      report["cpus"].push_back(describe_cpu(static_cast<int>(i), *devices.cpus[i]));
    }
    report["soc"] = nullptr;
    if (devices.soc) {
      report["soc"] = {{"name", devices.soc->name()},
                       {"backend", devices.soc->name()},
                       {"rails", devices.soc->rail_descriptions()}};
    }
    for (const auto& b : devices.backends) {
      report["backends"].push_back(
          {{"backend", b.backend}, {"used", b.used}, {"detail", b.detail}});
    }
    if (*json) {
      std::cout << report.dump(2) << "\n";
    } else {
      print_text(report);
    }
  });
}

}  // namespace zeus::cli
