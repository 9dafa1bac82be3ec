// A fake libamd_smi.so: the AMD SMI entry points Zeus uses, over the same state model and file
// as the fake rocm_smi (testing/fake_rocm_smi/fake_state.h, ZEUS_FAKE_ROCM_SMI_STATE), so one
// state describes the AMD GPUs both libraries see. Errors are injected by amdsmi function name
// with amdsmi status codes; a "lost" device answers AMDSMI_STATUS_FILE_ERROR, a handle whose
// device was removed from the file AMDSMI_STATUS_NOT_FOUND.
//
// Fields this fake adds to a device (defaults in brackets): "hip_id" [its position],
// "kfd_node_id" [its position], "socket" [its position; devices sharing one are one socket's
// processors], "bdf" [(position + 1) << 8, i.e. 0000:0N:00.0], "temperature_c" [50],
// "current_power_na" / "average_power_na" [false: the field reads 0xFFFF when true]. State-wide:
// "amdsmi_abi" [26]: 24, 25 or 26 selects the amdsmi_power_info_t layout and version it reports;
// anything else is reported as that version year (e.g. 23, too old for Zeus).
// Socket power is power_uw (current) and average_power_uw (else power_uw) in whole watts.
// Built twice: libamd_smi.so, and with ZEUS_FAKE_AMDSMI_OLD (fakes/old/) a ROCm 6.3 library that
// lacks amdsmi_get_gpu_enumeration_info (HIP order then comes from KFD node ids).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "../../src/device/amd/amdsmi_types.h"
#include "../fake_rocm_smi/fake_library.h"

namespace {

using zeus::fake_rocm_smi::json;
namespace amdsmi = zeus::amdsmi;
namespace model = zeus::fake_rocm_smi;

model::FakeLibrary<amdsmi::Status> g_lib({amdsmi::kStatusSuccess, amdsmi::kStatusNotFound,
                                          amdsmi::kStatusFileError});

constexpr uintptr_t kProcessorBase = 0x1000;
constexpr uintptr_t kSocketBase = 0x100000;

// The device index a processor handle names, or UINT64_MAX for a handle this fake never gave.
uint64_t index_of(amdsmi::ProcessorHandle handle) {
  auto value = reinterpret_cast<uintptr_t>(handle);
  return value >= kProcessorBase && value < kSocketBase ? value - kProcessorBase : UINT64_MAX;
}

amdsmi::ProcessorHandle handle_of(size_t index) {
  return reinterpret_cast<amdsmi::ProcessorHandle>(kProcessorBase + index);
}

int socket_of(const json& device, size_t index) {
  return device.value("socket", static_cast<int>(index));
}

// Distinct socket ids in order of first appearance.
std::vector<int> sockets_of(const json& state) {
  std::vector<int> sockets;
  const json devices = state.value("devices", json::array());
  for (size_t i = 0; i < devices.size(); ++i) {
    int socket = socket_of(devices[i], i);
    bool seen = false;
    for (int s : sockets) seen = seen || s == socket;
    if (!seen) sockets.push_back(socket);
  }
  return sockets;
}

template <typename Body>
amdsmi::Status with_device(const char* function, amdsmi::ProcessorHandle handle, bool mutate,
                           Body body) {
  const uint64_t index = index_of(handle);
  if (index == UINT64_MAX) return amdsmi::kStatusInval;
  return g_lib.with_device(function, index, mutate, body);
}

uint32_t watts(double microwatts) { return static_cast<uint32_t>(std::llround(microwatts / 1e6)); }

template <typename Info>
void fill_power(const json& d, void* out) {
  Info info{};
  info.current_socket_power =
      d.value("current_power_na", false) ? amdsmi::kPowerNa16 : watts(d.value("power_uw", 0.0));
  info.average_socket_power =
      d.value("average_power_na", false)
          ? amdsmi::kPowerNa16
          : watts(d.value("average_power_uw", d.value("power_uw", 0.0)));
  std::memcpy(out, &info, sizeof(info));
}

const char* status_text(amdsmi::Status status) {
  switch (status) {
    case amdsmi::kStatusSuccess:
      return "AMDSMI_STATUS_SUCCESS: Call succeeded";
    case amdsmi::kStatusInval:
      return "AMDSMI_STATUS_INVAL: Invalid parameters";
    case amdsmi::kStatusNotSupported:
      return "AMDSMI_STATUS_NOT_SUPPORTED: Command not supported";
    case amdsmi::kStatusNoPerm:
      return "AMDSMI_STATUS_NO_PERM: Permission Denied";
    case amdsmi::kStatusInputOutOfBounds:
      return "AMDSMI_STATUS_INPUT_OUT_OF_BOUNDS: The provided input is out of allowable or safe "
             "range";
    case amdsmi::kStatusFileError:
      return "AMDSMI_STATUS_FILE_ERROR: Problem accessing a file";
    case amdsmi::kStatusNotFound:
      return "AMDSMI_STATUS_NOT_FOUND: Device Not found";
    case amdsmi::kStatusInitError:
      return "AMDSMI_STATUS_INIT_ERROR: An error occurred when initializing internal data "
             "structures";
    case amdsmi::kStatusBusy:
      return "AMDSMI_STATUS_BUSY: Device busy";
    default:
      return "AMDSMI_STATUS_UNKNOWN_ERROR: An unknown error occurred";
  }
}

}  // namespace

extern "C" {

amdsmi::Status amdsmi_init(uint64_t flags) {
  if ((flags & amdsmi::kInitAmdGpus) == 0) return amdsmi::kStatusInval;
  return g_lib.with_state("amdsmi_init", [](json&) { return amdsmi::kStatusSuccess; });
}

amdsmi::Status amdsmi_shut_down() {
  return g_lib.with_state("amdsmi_shut_down", [](json&) { return amdsmi::kStatusSuccess; });
}

amdsmi::Status amdsmi_status_code_to_string(amdsmi::Status status, const char** text) {
  if (text == nullptr) return amdsmi::kStatusInval;
  *text = status_text(status);
  return amdsmi::kStatusSuccess;
}

amdsmi::Status amdsmi_get_lib_version(amdsmi::VersionBuffer* version) {
  if (version == nullptr) return amdsmi::kStatusInval;
  return g_lib.with_state("amdsmi_get_lib_version", [&](json& state) {
    const uint32_t abi = state.value("amdsmi_abi", 26u);
    *version = amdsmi::VersionBuffer{};
    if (abi >= 26) {
      version->words[0] = abi;  // major
      version->words[1] = 2;    // minor
    } else {
      version->words[0] = abi;  // year
      version->words[1] = abi == 24 ? 7 : abi;
    }
    version->build = "fake";
    return amdsmi::kStatusSuccess;
  });
}

amdsmi::Status amdsmi_get_socket_handles(uint32_t* count, amdsmi::SocketHandle* sockets) {
  if (count == nullptr) return amdsmi::kStatusInval;
  return g_lib.with_state("amdsmi_get_socket_handles", [&](json& state) {
    const std::vector<int> ids = sockets_of(state);
    if (sockets == nullptr) {
      *count = static_cast<uint32_t>(ids.size());
      return amdsmi::kStatusSuccess;
    }
    const uint32_t n = std::min<uint32_t>(*count, static_cast<uint32_t>(ids.size()));
    for (uint32_t i = 0; i < n; ++i) {
      sockets[i] = reinterpret_cast<amdsmi::SocketHandle>(kSocketBase + static_cast<uintptr_t>(ids[i]));
    }
    *count = n;
    return amdsmi::kStatusSuccess;
  });
}

amdsmi::Status amdsmi_get_processor_handles(amdsmi::SocketHandle socket, uint32_t* count,
                                            amdsmi::ProcessorHandle* processors) {
  if (count == nullptr) return amdsmi::kStatusInval;
  const auto value = reinterpret_cast<uintptr_t>(socket);
  if (value < kSocketBase) return amdsmi::kStatusInval;
  const int wanted = static_cast<int>(value - kSocketBase);
  return g_lib.with_state("amdsmi_get_processor_handles", [&](json& state) {
    std::vector<amdsmi::ProcessorHandle> found;
    const json devices = state.value("devices", json::array());
    for (size_t i = 0; i < devices.size(); ++i) {
      if (socket_of(devices[i], i) == wanted) found.push_back(handle_of(i));
    }
    if (found.empty()) return amdsmi::kStatusNotFound;
    if (processors == nullptr) {
      *count = static_cast<uint32_t>(found.size());
      return amdsmi::kStatusSuccess;
    }
    const uint32_t n = std::min<uint32_t>(*count, static_cast<uint32_t>(found.size()));
    for (uint32_t i = 0; i < n; ++i) processors[i] = found[i];
    *count = n;
    return amdsmi::kStatusSuccess;
  });
}

#ifndef ZEUS_FAKE_AMDSMI_OLD
amdsmi::Status amdsmi_get_gpu_enumeration_info(amdsmi::ProcessorHandle handle,
                                               amdsmi::EnumerationInfo* info) {
  if (info == nullptr) return amdsmi::kStatusInval;
  const uint64_t index = index_of(handle);
  return with_device("amdsmi_get_gpu_enumeration_info", handle, false, [&](json& d, json&) {
    *info = amdsmi::EnumerationInfo{};
    info->hip_id = d.value("hip_id", static_cast<uint32_t>(index));
    info->hsa_id = info->hip_id + 1;
    std::snprintf(info->hip_uuid, sizeof(info->hip_uuid), "GPU-%016llx",
                  static_cast<unsigned long long>(d.value("unique_id", uint64_t{0})));
    return amdsmi::kStatusSuccess;
  });
}
#endif

amdsmi::Status amdsmi_get_gpu_kfd_info(amdsmi::ProcessorHandle handle, amdsmi::KfdInfo* info) {
  if (info == nullptr) return amdsmi::kStatusInval;
  const uint64_t index = index_of(handle);
  return with_device("amdsmi_get_gpu_kfd_info", handle, false, [&](json& d, json&) {
    *info = amdsmi::KfdInfo{};
    info->node_id = d.value("kfd_node_id", static_cast<uint32_t>(index));
    info->kfd_id = 40000 + info->node_id;
    return amdsmi::kStatusSuccess;
  });
}

amdsmi::Status amdsmi_get_gpu_asic_info(amdsmi::ProcessorHandle handle, amdsmi::AsicInfo* info) {
  if (info == nullptr) return amdsmi::kStatusInval;
  return with_device("amdsmi_get_gpu_asic_info", handle, false, [&](json& d, json&) {
    // Writes only market_name: the caller's struct may be as small as the ABI 24 one.
    const std::string name = d.value("name", std::string("AMD Instinct MI250X"));
    std::memset(info->market_name, 0, sizeof(info->market_name));
    std::strncpy(info->market_name, name.c_str(), sizeof(info->market_name) - 1);
    return amdsmi::kStatusSuccess;
  });
}

amdsmi::Status amdsmi_get_gpu_device_bdf(amdsmi::ProcessorHandle handle, amdsmi::Bdf* bdf) {
  if (bdf == nullptr) return amdsmi::kStatusInval;
  const uint64_t index = index_of(handle);
  return with_device("amdsmi_get_gpu_device_bdf", handle, false, [&](json& d, json&) {
    *bdf = d.value("bdf", static_cast<uint64_t>((index + 1) << 8));
    return amdsmi::kStatusSuccess;
  });
}

amdsmi::Status amdsmi_get_power_cap_info(amdsmi::ProcessorHandle handle, uint32_t sensor_ind,
                                         amdsmi::PowerCapInfo* info) {
  if (info == nullptr || sensor_ind != 0) return amdsmi::kStatusInval;
  return with_device("amdsmi_get_power_cap_info", handle, false, [&](json& d, json&) {
    *info = amdsmi::PowerCapInfo{};
    info->power_cap = d.value("cap_uw", uint64_t{0});
    info->default_power_cap = d.value("default_cap_uw", uint64_t{0});
    info->min_power_cap = d.value("min_cap_uw", uint64_t{0});
    info->max_power_cap = d.value("max_cap_uw", uint64_t{0});
    info->dpm_cap = info->max_power_cap;
    return amdsmi::kStatusSuccess;
  });
}

amdsmi::Status amdsmi_set_power_cap(amdsmi::ProcessorHandle handle, uint32_t sensor_ind,
                                    uint64_t cap_uw) {
  if (sensor_ind != 0) return amdsmi::kStatusInval;
  return with_device("amdsmi_set_power_cap", handle, true, [&](json& d, json&) {
    if (cap_uw < d.value("min_cap_uw", uint64_t{0}) || cap_uw > d.value("max_cap_uw", uint64_t{0})) {
      return amdsmi::kStatusInval;
    }
    d["cap_uw"] = cap_uw;
    return amdsmi::kStatusSuccess;
  });
}

amdsmi::Status amdsmi_get_power_info(amdsmi::ProcessorHandle handle, void* info) {
  if (info == nullptr) return amdsmi::kStatusInval;
  return with_device("amdsmi_get_power_info", handle, false, [&](json& d, json& state) {
    const uint32_t abi = state.value("amdsmi_abi", 26u);
    if (abi == 24) {
      fill_power<amdsmi::PowerInfo24>(d, info);
    } else if (abi == 25) {
      fill_power<amdsmi::PowerInfo25>(d, info);
    } else {
      fill_power<amdsmi::PowerInfo26>(d, info);
    }
    return amdsmi::kStatusSuccess;
  });
}

amdsmi::Status amdsmi_get_energy_count(amdsmi::ProcessorHandle handle, uint64_t* accumulator,
                                       float* resolution_uj, uint64_t* timestamp) {
  if (accumulator == nullptr || resolution_uj == nullptr || timestamp == nullptr) {
    return amdsmi::kStatusInval;
  }
  return with_device("amdsmi_get_energy_count", handle, false, [&](json& d, json& state) {
    const uint64_t now_ns = model::now_ns(state);
    *accumulator = static_cast<uint64_t>(std::floor(model::energy_count_at(d, now_ns)));
    *resolution_uj = d.value("energy_resolution_uj", 15.3f);
    *timestamp = now_ns;
    return amdsmi::kStatusSuccess;
  });
}

amdsmi::Status amdsmi_get_temp_metric(amdsmi::ProcessorHandle handle,
                                      amdsmi::TemperatureType type,
                                      amdsmi::TemperatureMetric metric, int64_t* temperature) {
  if (temperature == nullptr) return amdsmi::kStatusInval;
  if (type != amdsmi::kTemperatureTypeHotspot && type != amdsmi::kTemperatureTypeEdge) {
    return amdsmi::kStatusNotSupported;
  }
  if (metric != amdsmi::kTempCurrent) return amdsmi::kStatusNotSupported;
  return with_device("amdsmi_get_temp_metric", handle, false, [&](json& d, json&) {
    *temperature = d.value("temperature_c", int64_t{50});
    return amdsmi::kStatusSuccess;
  });
}

amdsmi::Status amdsmi_get_clock_info(amdsmi::ProcessorHandle handle, amdsmi::ClkType type,
                                     amdsmi::ClkInfo* info) {
  if (info == nullptr) return amdsmi::kStatusInval;
  return with_device("amdsmi_get_clock_info", handle, false, [&](json& d, json&) {
    const char* key = type == amdsmi::kClkTypeGfx ? "sclk_mhz"
                      : type == amdsmi::kClkTypeMem ? "mclk_mhz"
                                                    : nullptr;
    if (key == nullptr || !d.contains(key) || d[key].empty()) return amdsmi::kStatusNotSupported;
    *info = amdsmi::ClkInfo{};
    info->min_clk = UINT32_MAX;
    for (const json& mhz : d[key]) {
      info->min_clk = std::min(info->min_clk, mhz.get<uint32_t>());
      info->max_clk = std::max(info->max_clk, mhz.get<uint32_t>());
    }
    const json range = d.value(type == amdsmi::kClkTypeGfx ? "sclk_range_mhz" : "mclk_range_mhz",
                               json::array());
    info->clk_locked = range.size() == 2 ? 1 : 0;
    info->clk = range.size() == 2 ? range[1].get<uint32_t>() : info->max_clk;
    return amdsmi::kStatusSuccess;
  });
}

amdsmi::Status amdsmi_set_gpu_clk_range(amdsmi::ProcessorHandle handle, uint64_t min_mhz,
                                        uint64_t max_mhz, amdsmi::ClkType type) {
  if (min_mhz > max_mhz) return amdsmi::kStatusInval;
  if (type != amdsmi::kClkTypeGfx && type != amdsmi::kClkTypeMem) return amdsmi::kStatusInval;
  return with_device("amdsmi_set_gpu_clk_range", handle, true, [&](json& d, json&) {
    const char* levels = type == amdsmi::kClkTypeGfx ? "sclk_mhz" : "mclk_mhz";
    if (!d.contains(levels) || d[levels].empty()) return amdsmi::kStatusNotSupported;
    uint64_t lowest = UINT64_MAX, highest = 0;
    for (const json& mhz : d.value(levels, json::array())) {
      lowest = std::min(lowest, mhz.get<uint64_t>());
      highest = std::max(highest, mhz.get<uint64_t>());
    }
    if (min_mhz < lowest || max_mhz > highest) return amdsmi::kStatusInputOutOfBounds;
    d[type == amdsmi::kClkTypeGfx ? "sclk_range_mhz" : "mclk_range_mhz"] =
        json::array({min_mhz, max_mhz});
    d["perf_level"] = amdsmi::kPerfLevelManual;
    return amdsmi::kStatusSuccess;
  });
}

amdsmi::Status amdsmi_set_gpu_perf_level(amdsmi::ProcessorHandle handle,
                                         amdsmi::PerfLevel level) {
  return with_device("amdsmi_set_gpu_perf_level", handle, true, [&](json& d, json&) {
    d["perf_level"] = level;
    if (level == amdsmi::kPerfLevelAuto) {
      d["sclk_range_mhz"] = json::array();
      d["mclk_range_mhz"] = json::array();
    }
    return amdsmi::kStatusSuccess;
  });
}

}  // extern "C"
