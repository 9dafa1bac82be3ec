// The subset of AMD SMI's C API (libamd_smi.so, ROCm 6.3 and newer) that Zeus uses, declared by
// us so that the build needs no vendor header. Values and layouts follow AMD's public amdsmi.h;
// amdsmi_types_test.cc pins the layouts.
//
// Units of the vendor API: power caps in microwatts (uW); socket power in whole watts (W) inside
// amdsmi_power_info_t; energy as a count whose resolution is in microjoules (count x resolution =
// uJ); clocks in MHz; temperatures in degrees Celsius. Header-only, no state; shared with the fake
// library in testing/fake_amdsmi/.
//
// amdsmi_power_info_t changed its layout twice (the library's ABI, the number after the soname:
// 24, 25, 26); amdsmi_get_lib_version tells which one a library uses, and PowerInfo24/25/26 hold
// each. A 24-byte version buffer fits both version layouts, so the version is read before the ABI
// is known.
//
//   zeus::amdsmi::PowerCapInfo info{};
//   zeus::amdsmi::Status status = api.get_power_cap_info(handle, 0, &info);
//   if (status == zeus::amdsmi::kStatusSuccess) use(info.power_cap);
#pragma once

#include <cstddef>
#include <cstdint>

namespace zeus::amdsmi {

// amdsmi_status_t.
using Status = uint32_t;
inline constexpr Status kStatusSuccess = 0;
inline constexpr Status kStatusInval = 1;
inline constexpr Status kStatusNotSupported = 2;
inline constexpr Status kStatusNotYetImplemented = 3;
inline constexpr Status kStatusFailLoadModule = 4;
inline constexpr Status kStatusFailLoadSymbol = 5;
inline constexpr Status kStatusDrmError = 6;
inline constexpr Status kStatusApiFailed = 7;
inline constexpr Status kStatusTimeout = 8;
inline constexpr Status kStatusRetry = 9;
inline constexpr Status kStatusNoPerm = 10;
inline constexpr Status kStatusInterrupt = 11;
inline constexpr Status kStatusIo = 12;
inline constexpr Status kStatusAddressFault = 13;
inline constexpr Status kStatusFileError = 14;
inline constexpr Status kStatusOutOfResources = 15;
inline constexpr Status kStatusInternalException = 16;
inline constexpr Status kStatusInputOutOfBounds = 17;
inline constexpr Status kStatusInitError = 18;
inline constexpr Status kStatusBusy = 30;
inline constexpr Status kStatusNotFound = 31;
inline constexpr Status kStatusNotInit = 32;
inline constexpr Status kStatusDriverNotLoaded = 34;
inline constexpr Status kStatusNoData = 40;
inline constexpr Status kStatusInsufficientSize = 41;
inline constexpr Status kStatusUnknownError = 0xFFFFFFFF;

// amdsmi_init_flags_t.
inline constexpr uint64_t kInitAmdGpus = 1u << 1;

using ProcessorHandle = void*;
using SocketHandle = void*;

// amdsmi_clk_type_t.
using ClkType = uint32_t;
inline constexpr ClkType kClkTypeGfx = 0x0;
inline constexpr ClkType kClkTypeMem = 0x4;

// amdsmi_dev_perf_level_t.
using PerfLevel = uint32_t;
inline constexpr PerfLevel kPerfLevelAuto = 0;
inline constexpr PerfLevel kPerfLevelManual = 3;

// amdsmi_temperature_type_t and amdsmi_temperature_metric_t.
using TemperatureType = uint32_t;
inline constexpr TemperatureType kTemperatureTypeEdge = 0;
inline constexpr TemperatureType kTemperatureTypeHotspot = 1;
using TemperatureMetric = uint32_t;
inline constexpr TemperatureMetric kTempCurrent = 0;

// A power field of amdsmi_power_info_t the GPU does not report: the library fills 0xFFFF (a
// 16-bit metrics sentinel), newer headers document UINT32_MAX.
inline constexpr uint32_t kPowerNa16 = 0xFFFF;
inline constexpr uint32_t kPowerNa32 = 0xFFFFFFFF;
inline constexpr bool power_is_na(uint32_t watts) {
  return watts == kPowerNa16 || watts == kPowerNa32;
}

inline constexpr size_t kMaxStringLength = 256;

// amdsmi_power_cap_info_t, all in uW.
struct PowerCapInfo {
  uint64_t power_cap;
  uint64_t default_power_cap;
  uint64_t dpm_cap;
  uint64_t min_power_cap;
  uint64_t max_power_cap;
  uint64_t reserved[3];
};

// amdsmi_clk_info_t, in MHz.
struct ClkInfo {
  uint32_t clk;
  uint32_t min_clk;
  uint32_t max_clk;
  uint8_t clk_locked;
  uint8_t clk_deep_sleep;
  uint32_t reserved[4];
};

// amdsmi_enumeration_info_t (ROCm 6.4+): the HIP index of a processor handle.
struct EnumerationInfo {
  uint32_t drm_render;
  uint32_t drm_card;
  uint32_t hsa_id;
  uint32_t hip_id;
  char hip_uuid[kMaxStringLength];
};

// amdsmi_kfd_info_t (ROCm 6.3): HIP enumerates GPUs in KFD node order.
struct KfdInfo {
  uint64_t kfd_id;
  uint32_t node_id;
  uint32_t current_partition_id;
  uint32_t reserved[12];
};

// amdsmi_asic_info_t: only market_name (at offset 0) is read; the real struct is 448 bytes
// (ABI 24) to 896 bytes (ABI 26), so this buffer over-allocates for every ABI.
struct AsicInfo {
  char market_name[kMaxStringLength];
  unsigned char rest[768];
};

// amdsmi_bdf_t as its uint64: function bits 0-2, device 3-7, bus 8-15, domain 16-63.
using Bdf = uint64_t;

// amdsmi_power_info_t per ABI; socket powers in W.
struct PowerInfo24 {
  uint32_t current_socket_power;
  uint32_t average_socket_power;
  uint32_t gfx_voltage;
  uint32_t soc_voltage;
  uint32_t mem_voltage;
  uint32_t power_limit;
  uint32_t reserved[11];
};
struct PowerInfo25 {
  uint64_t socket_power;
  uint32_t current_socket_power;
  uint32_t average_socket_power;
  uint32_t gfx_voltage;
  uint32_t soc_voltage;
  uint32_t mem_voltage;
  uint32_t power_limit;
  uint32_t reserved[2];
};
struct PowerInfo26 {
  uint64_t socket_power;
  uint32_t current_socket_power;
  uint32_t average_socket_power;
  uint64_t gfx_voltage;
  uint64_t soc_voltage;
  uint64_t mem_voltage;
  uint32_t power_limit;
  uint64_t reserved[18];
};
// Large enough for every PowerInfo layout.
inline constexpr size_t kPowerInfoBufferSize = 256;

// amdsmi_version_t: {year, major, minor, release, build} up to ABI 25, {major, minor, release,
// build} from ABI 26; both 24 bytes. The first word is 24 or 25 (the year) or 26+ (the major).
struct VersionBuffer {
  uint32_t words[4];
  const char* build;
};

// Entry points, with the vendor's parameter order.
using InitFn = Status (*)(uint64_t init_flags);
using ShutDownFn = Status (*)();
using StatusCodeToStringFn = Status (*)(Status status, const char** text);
using GetLibVersionFn = Status (*)(VersionBuffer* version);
using GetSocketHandlesFn = Status (*)(uint32_t* count, SocketHandle* sockets);
using GetProcessorHandlesFn = Status (*)(SocketHandle socket, uint32_t* count,
                                         ProcessorHandle* processors);
using GetGpuEnumerationInfoFn = Status (*)(ProcessorHandle handle, EnumerationInfo* info);
using GetGpuKfdInfoFn = Status (*)(ProcessorHandle handle, KfdInfo* info);
using GetGpuAsicInfoFn = Status (*)(ProcessorHandle handle, AsicInfo* info);
using GetGpuDeviceBdfFn = Status (*)(ProcessorHandle handle, Bdf* bdf);
using GetPowerCapInfoFn = Status (*)(ProcessorHandle handle, uint32_t sensor_ind,
                                     PowerCapInfo* info);
using SetPowerCapFn = Status (*)(ProcessorHandle handle, uint32_t sensor_ind, uint64_t cap_uw);
using GetPowerInfoFn = Status (*)(ProcessorHandle handle, void* info);
using GetEnergyCountFn = Status (*)(ProcessorHandle handle, uint64_t* energy_accumulator,
                                    float* counter_resolution_uj, uint64_t* timestamp);
using GetTempMetricFn = Status (*)(ProcessorHandle handle, TemperatureType sensor_type,
                                   TemperatureMetric metric, int64_t* temperature);
using GetClockInfoFn = Status (*)(ProcessorHandle handle, ClkType clk_type, ClkInfo* info);
using SetGpuClkRangeFn = Status (*)(ProcessorHandle handle, uint64_t min_mhz, uint64_t max_mhz,
                                    ClkType clk_type);
using SetGpuPerfLevelFn = Status (*)(ProcessorHandle handle, PerfLevel perf_level);

}  // namespace zeus::amdsmi
