// The subset of rocm_smi's C API that Zeus uses, declared by us so that the build needs no vendor
// header. Values and layouts copy /usr/include/rocm_smi/rocm_smi.h (rocm_smi_lib 5.x/6.x); the
// test rocm_smi_types_test.cc compares them with the vendor header where one is installed.
//
// Units of the vendor API: power and power caps in microwatts (uW), energy as a count whose
// resolution is in microjoules (count x resolution = uJ), clock frequencies in Hz when read and in
// MHz when a range is set. Header-only, no state; shared with the fake library in testing/.
//
//   zeus::rsmi::Frequencies freqs{};
//   zeus::rsmi::Status status = api.dev_gpu_clk_freq_get(0, zeus::rsmi::kClkTypeSys, &freqs);
//   if (status == zeus::rsmi::kStatusSuccess) use(freqs.frequency[freqs.current]);
#pragma once

#include <cstddef>
#include <cstdint>

namespace zeus::rsmi {

// rsmi_status_t (an unsigned 32-bit enum in the vendor header).
using Status = uint32_t;
inline constexpr Status kStatusSuccess = 0x0;
inline constexpr Status kStatusInvalidArgs = 0x1;
inline constexpr Status kStatusNotSupported = 0x2;
inline constexpr Status kStatusFileError = 0x3;
inline constexpr Status kStatusPermission = 0x4;
inline constexpr Status kStatusOutOfResources = 0x5;
inline constexpr Status kStatusInternalException = 0x6;
inline constexpr Status kStatusInputOutOfBounds = 0x7;
inline constexpr Status kStatusInitError = 0x8;
inline constexpr Status kStatusNotYetImplemented = 0x9;
inline constexpr Status kStatusNotFound = 0xA;
inline constexpr Status kStatusInsufficientSize = 0xB;
inline constexpr Status kStatusInterrupt = 0xC;
inline constexpr Status kStatusUnexpectedSize = 0xD;
inline constexpr Status kStatusNoData = 0xE;
inline constexpr Status kStatusUnexpectedData = 0xF;
inline constexpr Status kStatusBusy = 0x10;
inline constexpr Status kStatusRefcountOverflow = 0x11;
inline constexpr Status kStatusUnknownError = 0xFFFFFFFF;

// rsmi_clk_type_t.
using ClkType = uint32_t;
inline constexpr ClkType kClkTypeSys = 0x0;
inline constexpr ClkType kClkTypeMem = 0x4;

// rsmi_dev_perf_level_t.
using PerfLevel = uint32_t;
inline constexpr PerfLevel kPerfLevelAuto = 0;
inline constexpr PerfLevel kPerfLevelManual = 3;

// RSMI_MAX_NUM_FREQUENCIES.
inline constexpr size_t kMaxNumFrequencies = 32;

// rsmi_frequencies_t: the supported frequencies (Hz) of one clock domain.
struct Frequencies {
  uint32_t num_supported;
  uint32_t current;  // index of the current frequency
  uint64_t frequency[kMaxNumFrequencies];
};

// Entry points, with the vendor's parameter order. Note the cap range: max comes BEFORE min.
using InitFn = Status (*)(uint64_t init_flags);
using ShutDownFn = Status (*)();
using StatusStringFn = Status (*)(Status status, const char** status_string);
using NumMonitorDevicesFn = Status (*)(uint32_t* num_devices);
using DevNameGetFn = Status (*)(uint32_t dv_ind, char* name, size_t len);
using DevUniqueIdGetFn = Status (*)(uint32_t dv_ind, uint64_t* id);
using DevSerialNumberGetFn = Status (*)(uint32_t dv_ind, char* serial_num, uint32_t len);
using DevPowerCapGetFn = Status (*)(uint32_t dv_ind, uint32_t sensor_ind, uint64_t* cap_uw);
using DevPowerCapSetFn = Status (*)(uint32_t dv_ind, uint32_t sensor_ind, uint64_t cap_uw);
using DevPowerCapRangeGetFn = Status (*)(uint32_t dv_ind, uint32_t sensor_ind, uint64_t* max_uw,
                                         uint64_t* min_uw);
using DevPowerCapDefaultGetFn = Status (*)(uint32_t dv_ind, uint64_t* default_cap_uw);
using DevPowerAveGetFn = Status (*)(uint32_t dv_ind, uint32_t sensor_ind, uint64_t* power_uw);
using DevCurrentSocketPowerGetFn = Status (*)(uint32_t dv_ind, uint64_t* socket_power_uw);
using DevEnergyCountGetFn = Status (*)(uint32_t dv_ind, uint64_t* count, float* resolution_uj,
                                       uint64_t* timestamp_ns);
using DevGpuClkFreqGetFn = Status (*)(uint32_t dv_ind, ClkType clk_type, Frequencies* f);
using DevClkRangeSetFn = Status (*)(uint32_t dv_ind, uint64_t min_mhz, uint64_t max_mhz,
                                    ClkType clk_type);
using DevPerfLevelSetFn = Status (*)(int32_t dv_ind, PerfLevel perf_level);

}  // namespace zeus::rsmi
