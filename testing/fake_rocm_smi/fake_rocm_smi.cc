// A fake librocm_smi64.so: the rocm_smi entry points Zeus uses, over the state model of
// fake_state.h (a JSON file named by ZEUS_FAKE_ROCM_SMI_STATE, or one in-memory default device).
// The state is re-read on every call, so a test may change it at any time; every mutation (power
// cap, clock range, performance level) is written back. Built twice: librocm_smi64.so, and with
// ZEUS_FAKE_ROCM_SMI_OLD an "old" library that lacks rsmi_dev_energy_count_get and
// rsmi_dev_current_socket_power_get (for "function not found" tests).

#include <cstdlib>
#include <cstring>
#include <string>

#include "../../src/device/amd/rocm_smi_types.h"
#include "fake_library.h"

namespace {

using zeus::fake_rocm_smi::json;
namespace rsmi = zeus::rsmi;
namespace model = zeus::fake_rocm_smi;

model::FakeLibrary<rsmi::Status> g_lib({rsmi::kStatusSuccess, rsmi::kStatusInvalidArgs,
                                        rsmi::kStatusFileError});

template <typename Body>
rsmi::Status with_device(const char* function, uint64_t index, bool mutate, Body body) {
  return g_lib.with_device(function, index, mutate, body);
}

rsmi::Status copy_string(const std::string& text, char* out, size_t len) {
  if (out == nullptr || len == 0) return rsmi::kStatusInvalidArgs;
  std::strncpy(out, text.c_str(), len - 1);
  out[len - 1] = '\0';
  return text.size() < len ? rsmi::kStatusSuccess : rsmi::kStatusInsufficientSize;
}

const char* status_text(rsmi::Status status) {
  switch (status) {
    case rsmi::kStatusSuccess:
      return "RSMI_STATUS_SUCCESS: The function has been executed successfully.";
    case rsmi::kStatusInvalidArgs:
      return "RSMI_STATUS_INVALID_ARGS: The provided arguments do not meet the preconditions "
             "required for calling this function.";
    case rsmi::kStatusNotSupported:
      return "RSMI_STATUS_NOT_SUPPORTED: This function is not supported in the current "
             "environment.";
    case rsmi::kStatusFileError:
      return "RSMI_STATUS_FILE_ERROR: There was an error in finding or opening a file or "
             "directory. The operation may not be supported by this Linux kernel version.";
    case rsmi::kStatusPermission:
      return "RSMI_STATUS_PERMISSION: The user ID of the calling process does not have sufficient "
             "permission to execute a command.  Often this is fixed by running as root (sudo).";
    case rsmi::kStatusInitError:
      return "An error occurred during initialization, during monitor discovery or when when "
             "initializing internal data structures";
    case rsmi::kStatusNotFound:
      return "An item required to complete the call was not found";
    case rsmi::kStatusBusy:
      return "A resource or mutex could not be acquired because it is already being used";
    default:
      return "An unknown error occurred";
  }
}

}  // namespace

extern "C" {

rsmi::Status rsmi_init(uint64_t /*init_flags*/) {
  return g_lib.with_state("rsmi_init", [](json&) { return rsmi::kStatusSuccess; });
}

rsmi::Status rsmi_shut_down() {
  return g_lib.with_state("rsmi_shut_down", [](json&) { return rsmi::kStatusSuccess; });
}

rsmi::Status rsmi_status_string(rsmi::Status status, const char** status_string) {
  if (status_string == nullptr) return rsmi::kStatusInvalidArgs;
  *status_string = status_text(status);
  return rsmi::kStatusSuccess;
}

rsmi::Status rsmi_num_monitor_devices(uint32_t* num_devices) {
  if (num_devices == nullptr) return rsmi::kStatusInvalidArgs;
  return g_lib.with_state("rsmi_num_monitor_devices", [&](json& state) {
    *num_devices = static_cast<uint32_t>(state.value("devices", json::array()).size());
    return rsmi::kStatusSuccess;
  });
}

rsmi::Status rsmi_dev_name_get(uint32_t dv_ind, char* name, size_t len) {
  return with_device("rsmi_dev_name_get", dv_ind, false, [&](json& d, json&) {
    return copy_string(d.value("name", std::string("AMD Instinct MI250X")), name, len);
  });
}

rsmi::Status rsmi_dev_unique_id_get(uint32_t dv_ind, uint64_t* id) {
  if (id == nullptr) return rsmi::kStatusInvalidArgs;
  return with_device("rsmi_dev_unique_id_get", dv_ind, false, [&](json& d, json&) {
    *id = d.value("unique_id", uint64_t{0});
    return rsmi::kStatusSuccess;
  });
}

rsmi::Status rsmi_dev_serial_number_get(uint32_t dv_ind, char* serial_num, uint32_t len) {
  return with_device("rsmi_dev_serial_number_get", dv_ind, false, [&](json& d, json&) {
    return copy_string(d.value("serial", std::string()), serial_num, len);
  });
}

rsmi::Status rsmi_dev_power_cap_get(uint32_t dv_ind, uint32_t sensor_ind, uint64_t* cap) {
  if (cap == nullptr || sensor_ind != 0) return rsmi::kStatusInvalidArgs;
  return with_device("rsmi_dev_power_cap_get", dv_ind, false, [&](json& d, json&) {
    *cap = d.value("cap_uw", uint64_t{0});
    return rsmi::kStatusSuccess;
  });
}

rsmi::Status rsmi_dev_power_cap_set(uint32_t dv_ind, uint32_t sensor_ind, uint64_t cap) {
  if (sensor_ind != 0) return rsmi::kStatusInvalidArgs;
  return with_device("rsmi_dev_power_cap_set", dv_ind, true, [&](json& d, json&) {
    if (cap < d.value("min_cap_uw", uint64_t{0}) || cap > d.value("max_cap_uw", uint64_t{0})) {
      return rsmi::kStatusInvalidArgs;
    }
    d["cap_uw"] = cap;
    return rsmi::kStatusSuccess;
  });
}

rsmi::Status rsmi_dev_power_cap_range_get(uint32_t dv_ind, uint32_t sensor_ind, uint64_t* max,
                                          uint64_t* min) {
  if (max == nullptr || min == nullptr || sensor_ind != 0) return rsmi::kStatusInvalidArgs;
  return with_device("rsmi_dev_power_cap_range_get", dv_ind, false, [&](json& d, json&) {
    *max = d.value("max_cap_uw", uint64_t{0});
    *min = d.value("min_cap_uw", uint64_t{0});
    return rsmi::kStatusSuccess;
  });
}

rsmi::Status rsmi_dev_power_cap_default_get(uint32_t dv_ind, uint64_t* default_cap) {
  if (default_cap == nullptr) return rsmi::kStatusInvalidArgs;
  return with_device("rsmi_dev_power_cap_default_get", dv_ind, false, [&](json& d, json&) {
    *default_cap = d.value("default_cap_uw", uint64_t{0});
    return rsmi::kStatusSuccess;
  });
}

rsmi::Status rsmi_dev_power_ave_get(uint32_t dv_ind, uint32_t sensor_ind, uint64_t* power) {
  if (power == nullptr || sensor_ind != 0) return rsmi::kStatusInvalidArgs;
  return with_device("rsmi_dev_power_ave_get", dv_ind, false, [&](json& d, json&) {
    *power = d.value("average_power_uw", d.value("power_uw", uint64_t{0}));
    return rsmi::kStatusSuccess;
  });
}

#ifndef ZEUS_FAKE_ROCM_SMI_OLD
rsmi::Status rsmi_dev_current_socket_power_get(uint32_t dv_ind, uint64_t* socket_power) {
  if (socket_power == nullptr) return rsmi::kStatusInvalidArgs;
  return with_device("rsmi_dev_current_socket_power_get", dv_ind, false, [&](json& d, json&) {
    *socket_power = d.value("power_uw", uint64_t{0});
    return rsmi::kStatusSuccess;
  });
}

rsmi::Status rsmi_dev_energy_count_get(uint32_t dv_ind, uint64_t* power, float* counter_resolution,
                                       uint64_t* timestamp) {
  if (power == nullptr || counter_resolution == nullptr || timestamp == nullptr) {
    return rsmi::kStatusInvalidArgs;
  }
  return with_device("rsmi_dev_energy_count_get", dv_ind, false, [&](json& d, json& state) {
    uint64_t now_ns = model::now_ns(state);
    *power = static_cast<uint64_t>(std::floor(model::energy_count_at(d, now_ns)));
    *counter_resolution = d.value("energy_resolution_uj", 15.3f);
    *timestamp = now_ns;
    return rsmi::kStatusSuccess;
  });
}
#endif

rsmi::Status rsmi_dev_gpu_clk_freq_get(uint32_t dv_ind, rsmi::ClkType clk_type,
                                       rsmi::Frequencies* f) {
  if (f == nullptr) return rsmi::kStatusInvalidArgs;
  return with_device("rsmi_dev_gpu_clk_freq_get", dv_ind, false, [&](json& d, json&) {
    const char* key = clk_type == rsmi::kClkTypeSys   ? "sclk_mhz"
                      : clk_type == rsmi::kClkTypeMem ? "mclk_mhz"
                                                      : nullptr;
    if (key == nullptr || !d.contains(key)) return rsmi::kStatusNotSupported;
    const json& clocks = d[key];
    *f = rsmi::Frequencies{};
    for (const json& mhz : clocks) {
      if (f->num_supported == rsmi::kMaxNumFrequencies) break;
      f->frequency[f->num_supported++] = mhz.get<uint64_t>() * 1000000;
    }
    f->current = f->num_supported > 0 ? f->num_supported - 1 : 0;
    return rsmi::kStatusSuccess;
  });
}

rsmi::Status rsmi_dev_clk_range_set(uint32_t dv_ind, uint64_t minclkvalue, uint64_t maxclkvalue,
                                    rsmi::ClkType clk_type) {
  if (minclkvalue > maxclkvalue) return rsmi::kStatusInvalidArgs;
  if (clk_type != rsmi::kClkTypeSys && clk_type != rsmi::kClkTypeMem) {
    return rsmi::kStatusInvalidArgs;
  }
  return with_device("rsmi_dev_clk_range_set", dv_ind, true, [&](json& d, json&) {
    d[clk_type == rsmi::kClkTypeSys ? "sclk_range_mhz" : "mclk_range_mhz"] =
        json::array({minclkvalue, maxclkvalue});
    d["perf_level"] = rsmi::kPerfLevelManual;
    return rsmi::kStatusSuccess;
  });
}

rsmi::Status rsmi_dev_perf_level_set(int32_t dv_ind, rsmi::PerfLevel perf_lvl) {
  if (dv_ind < 0) return rsmi::kStatusInvalidArgs;
  return with_device("rsmi_dev_perf_level_set", static_cast<uint64_t>(dv_ind), true,
                     [&](json& d, json&) {
                       d["perf_level"] = perf_lvl;
                       if (perf_lvl == rsmi::kPerfLevelAuto) {
                         d["sclk_range_mhz"] = json::array();
                         d["mclk_range_mhz"] = json::array();
                       }
                       return rsmi::kStatusSuccess;
                     });
}

}  // extern "C"
