// The environment report (zeus/zeusd_client/environment_report.h). It lives beside
// discover_devices() because
// it reports what that routing sees and probes zeusd the way the library's client talks to it.
#include "zeus/zeusd_client/environment_report.h"

#include <nlohmann/json.hpp>

#include <sys/utsname.h>

#include <cstdlib>
#include <sstream>
#include <utility>
#include <vector>

#include "common/dynamic_library.h"
#include "http/client.h"
#include "http/url.h"
#include "zeus/zeusd_client/zeusd_client.h"

namespace zeus {
namespace {

using json = nlohmann::json;

constexpr double kZeusdTimeoutS = 2.0;

json optional_environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? json(value) : json(nullptr);
}

json platform() {
  utsname names{};
  if (uname(&names) != 0) return {{"error", "uname failed"}};
  return {{"system", names.sysname}, {"release", names.release}, {"machine", names.machine}};
}

// The first of `candidates` the dynamic loader opens, with the file it opened.
json library(const std::string& name, const std::vector<std::string>& candidates) {
  std::string errors;
  for (const std::string& candidate : candidates) {
    auto opened = DynamicLibrary::open(candidate);
    if (opened) {
      return {{"name", name}, {"requested", candidate}, {"path", opened->loaded_file()},
              {"error", nullptr}};
    }
    errors += (errors.empty() ? "" : "; ") + opened.error().message;
  }
  return {{"name", name}, {"requested", candidates.front()}, {"path", nullptr}, {"error", errors}};
}

json libraries(const DiscoverOptions& options) {
  return json::array({library("NVML", {options.nvml_path}),
                      library("AMD SMI", {options.amdsmi_path}),
                      library("ROCm SMI", {options.rocm_smi_path}),
                      library("CUDA runtime", {"libcudart.so", "libcudart.so.12", "libcudart.so.11.0"}),
                      library("HIP runtime", {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"})});
}

void add_devices(json& report, const DiscoverOptions& options) {
  report["gpus"] = json::array();
  report["cpus"] = json::array();
  report["backends"] = json::array();
  report["rapl"] = {{"available", false}, {"detail", "not probed"}};
  auto devices = discover_devices(options);
  if (!devices) {
    report["discovery_error"] = devices.error().message;
    return;
  }
  for (size_t i = 0; i < devices->gpus.size(); ++i) {
    Gpu& gpu = *devices->gpus[i];
    report["gpus"].push_back({{"index", i},
                              {"physical_index", gpu.physical_index()},
                              {"name", gpu.name()},
                              {"uuid", gpu.uuid()},
                              {"backend", gpu.backend()},
                              {"energy_counter", gpu.has_energy_counter()}});
  }
  for (size_t i = 0; i < devices->cpus.size(); ++i) {
    Cpu& cpu = *devices->cpus[i];
    auto energy = cpu.package_energy_uj();
    report["cpus"].push_back({{"index", i},
                              {"name", cpu.name()},
                              {"dram", cpu.has_dram()},
                              {"readable", energy.has_value()},
                              {"error", energy ? json(nullptr) : json(energy.error().message)}});
  }
  for (const BackendReport& b : devices->backends) {
    report["backends"].push_back({{"backend", b.backend}, {"used", b.used}, {"detail", b.detail}});
    if (b.backend == "rapl") report["rapl"] = {{"available", b.used}, {"detail", b.detail}};
  }
}

// GET /discover on zeusd: its devices and what it allows this process.
json probe_zeusd() {
  const json socket = optional_environment(kZeusdSocketEnvironment);
  const json host_port = optional_environment(kZeusdHostPortEnvironment);
  const bool use_socket = socket.is_string() && !socket.get<std::string>().empty();
  if (!use_socket && !(host_port.is_string() && !host_port.get<std::string>().empty())) {
    return {{"configured", false}};
  }
  http::ClientOptions options;
  options.timeout_s = kZeusdTimeoutS;
  Result<std::unique_ptr<http::HttpClient>> client = fail(ErrorCode::kInternal, "no endpoint");
  json zeusd = {{"configured", true}, {"reachable", false}};
  if (use_socket) {
    zeusd["endpoint"] = "unix:" + socket.get<std::string>();
    client = http::HttpClient::unix_socket(socket.get<std::string>(), options);
  } else {
    zeusd["endpoint"] = "tcp:" + host_port.get<std::string>();
    auto url = http::parse_http_url("http://" + host_port.get<std::string>());
    if (!url) {
      zeusd["error"] = std::string(kZeusdHostPortEnvironment) + " must be HOST:PORT, e.g. " +
                       "127.0.0.1:4938 (" + url.error().message + ")";
      return zeusd;
    }
    client = http::HttpClient::tcp(url->host, url->port, options);
  }
  if (!client) {
    zeusd["error"] = client.error().message;
    return zeusd;
  }
  auto answer = (*client)->request("GET", "/discover");
  if (!answer) {
    zeusd["error"] = answer.error().message + " (is zeusd running, and may this user open it?)";
    return zeusd;
  }
  const json body = json::parse(answer->body, nullptr, false);
  if (answer->status != 200 || !body.is_object()) {
    zeusd["error"] = "GET /discover answered " + std::to_string(answer->status) +
                     (body.is_object() ? ": " + body.dump() : std::string(" (not zeusd?)"));
    return zeusd;
  }
  zeusd["reachable"] = true;
  json gpus = json::array();
  for (const json& gpu : body.value("gpus", json::array())) {
    if (gpu.is_object()) gpus.push_back(gpu.value("name", std::string("?")));
  }
  zeusd["gpus"] = gpus;
  zeusd["cpus"] = body.value("cpus", json::array()).size();
  const json caller = body.value("caller", json::object());
  zeusd["capabilities"] = caller.is_object() ? caller.value("capabilities", json::array())
                                             : json::array();
  zeusd["auth_required"] = body.value("auth_required", false);
  return zeusd;
}

// `key` of `object`, or null when `object` is not an object or lacks it (the report may come from
// Python, so it is never trusted to have every field).
json field(const json& object, const char* key) {
  return object.is_object() && object.contains(key) ? object[key] : json(nullptr);
}

// A boolean field (false when absent or not a boolean), a list field (empty when not a list).
bool flag(const json& object, const char* key) {
  const json value = field(object, key);
  return value.is_boolean() && value.get<bool>();
}

json list(const json& object, const char* key) {
  json value = field(object, key);
  return value.is_array() ? value : json::array();
}

std::string text(const json& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

void section(std::ostringstream& out, const std::string& title) {
  out << "## " << title << "\n";
}

}  // namespace

nlohmann::json environment_report(const nlohmann::json& packages) {
  const DiscoverOptions options = DiscoverOptions::from_environment();
  json report;
  report["packages"] = packages;
  report["platform"] = platform();
  json environment = json::object();
  // Every variable the project reads (secrets are shown as set or not, never their value).
  for (const char* name :
       {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ZEUS_NVML_PATH",
        "ZEUS_AMDSMI_PATH", "ZEUS_ROCM_SMI_PATH", "ZEUS_POWERCAP_ROOT", "ZEUS_SYSFS_ROOT",
        "ZEUS_DATA_DIR", "ZEUS_LOG_LEVEL", "ZEUS_CA_FILE", "ZEUS_FAKE_NVML_STATE",
        "ZEUS_FAKE_ROCM_SMI_STATE", "ZEUS_BSO_SERVER", "ZEUS_ELECTRICITYMAPS_URL",
        "ZEUS_OPENEI_URL", "ZEUS_PFO_SCHEDULER", "ZEUS_PFO_SCHEDULER_ARGS", "ZEUS_PFO_DUMP_DATA",
        "ZEUS_PFO_DUMP_DIR", "ZEUS_PFO_MAX_JOB_IDLE_TIME", kZeusdSocketEnvironment,
        kZeusdHostPortEnvironment}) {
    environment[name] = optional_environment(name);
  }
  for (const char* secret : {"ZEUSD_TOKEN", "ELECTRICITYMAPS_API_KEY", "OPENEI_API_KEY"}) {
    environment[secret] = optional_environment(secret).is_null() ? json(nullptr) : json("[set]");
  }
  report["environment"] = environment;
  report["libraries"] = libraries(options);
  add_devices(report, options);
  report["zeusd"] = probe_zeusd();
  return report;
}

std::string format_environment_report(const nlohmann::json& report) {
  std::ostringstream out;
  section(out, "Versions");
  for (const json& p : list(report, "packages")) {
    out << "  " << text(field(p, "name")) << ": " << text(field(p, "version"))
        << "\n";
  }
  const json os = field(report, "platform");
  out << "  platform: " << text(field(os, "system")) << " " << text(field(os, "release"))
      << " " << text(field(os, "machine")) << "\n";
  section(out, "Environment");
  const json environment = field(report, "environment");
  for (auto it = environment.begin(); environment.is_object() && it != environment.end(); ++it) {
    out << "  " << it.key() << "=" << (it->is_null() ? "[not set]" : text(*it)) << "\n";
  }
  section(out, "Libraries");
  for (const json& lib : list(report, "libraries")) {
    out << "  " << text(field(lib, "name")) << ": ";
    if (field(lib, "path").is_string()) {
      out << text(field(lib, "path")) << " (loaded as " << text(field(lib, "requested")) << ")\n";
    } else {
      out << "not found: " << text(field(lib, "error")) << "\n";
    }
  }
  section(out, "Devices");
  if (!field(report, "discovery_error").is_null()) {
    out << "  discovery failed: " << text(field(report, "discovery_error")) << "\n";
  }
  const json gpus = list(report, "gpus");
  if (gpus.empty()) out << "  GPUs: none\n";
  for (const json& g : gpus) {
    out << "  GPU " << text(field(g, "index")) << " (physical " << text(field(g, "physical_index"))
        << "): " << text(field(g, "name")) << ", " << text(field(g, "uuid")) << ", backend " << text(field(g, "backend"))
        << ", energy counter " << (flag(g, "energy_counter") ? "yes" : "no") << "\n";
  }
  for (const json& c : list(report, "cpus")) {
    out << "  CPU " << text(field(c, "index")) << ": " << text(field(c, "name")) << " (RAPL"
        << (flag(c, "dram") ? ", DRAM" : "") << ")"
        << (flag(c, "readable") ? "" : " not readable: " + text(field(c, "error"))) << "\n";
  }
  out << "  backends:\n";
  for (const json& b : list(report, "backends")) {
    out << "    " << text(field(b, "backend")) << ": " << (flag(b, "used") ? "used: " : "not used: ")
        << text(field(b, "detail")) << "\n";
  }
  section(out, "RAPL");
  const json rapl = field(report, "rapl");
  out << "  " << (flag(rapl, "available") ? "available: " : "unavailable: ")
      << text(field(rapl, "detail")) << "\n";
  section(out, "zeusd");
  const json zeusd = field(report, "zeusd");
  if (!flag(zeusd, "configured")) {
    out << "  not configured (set ZEUSD_SOCK_PATH or ZEUSD_HOST_PORT to use it)\n";
  } else {
    out << "  endpoint: " << text(field(zeusd, "endpoint")) << "\n";
    if (!flag(zeusd, "reachable")) {
      out << "  unreachable: " << text(field(zeusd, "error")) << "\n";
    } else {
      std::string scopes;
      for (const json& c : list(zeusd, "capabilities")) {
        scopes += (scopes.empty() ? "" : ", ") + text(c);
      }
      out << "  reachable: " << list(zeusd, "gpus").size() << " GPUs "
          << text(field(zeusd, "gpus")) << ", " << text(field(zeusd, "cpus"))
          << " CPUs\n  capabilities granted to this process: "
          << (scopes.empty() ? "none" : scopes) << "\n  auth required: "
          << (flag(zeusd, "auth_required") ? "yes" : "no") << "\n";
    }
  }
  return out.str();
}

}  // namespace zeus
