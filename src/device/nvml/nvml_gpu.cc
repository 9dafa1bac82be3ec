#include "device/nvml/nvml_gpu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "device/nvml/nvml_error.h"
#include "zeus/common/log.h"

namespace zeus {

using namespace nvml;

namespace {

// "150 W" or "150.5 W".
std::string watts(uint32_t milliwatts) {
  std::string text = std::to_string(milliwatts / 1000);
  if (uint32_t fraction = milliwatts % 1000; fraction != 0) {
    char digits[8];
    std::snprintf(digits, sizeof(digits), ".%03u", fraction);
    text += digits;
    while (text.back() == '0') text.pop_back();
  }
  return text + " W";
}

GpuArchitecture architecture_from_nvml(unsigned int code) {
  if (code >= static_cast<unsigned int>(GpuArchitecture::kKepler) &&
      code <= static_cast<unsigned int>(GpuArchitecture::kBlackwell)) {
    return static_cast<GpuArchitecture>(code);
  }
  return GpuArchitecture::kUnknown;
}

// The field's value as mW; nullopt for a negative or non-integral type.
std::optional<uint32_t> field_value_mw(const nvmlFieldValue_t& field) {
  switch (field.valueType) {
    case kNvmlValueTypeUnsignedInt:
      return field.value.uiVal;
    case kNvmlValueTypeUnsignedLong:
      return static_cast<uint32_t>(field.value.ulVal);
    case kNvmlValueTypeUnsignedLongLong:
      return static_cast<uint32_t>(field.value.ullVal);
    case kNvmlValueTypeSignedLongLong:
      if (field.value.sllVal < 0) return std::nullopt;
      return static_cast<uint32_t>(field.value.sllVal);
    case kNvmlValueTypeSignedInt:
      if (field.value.siVal < 0) return std::nullopt;
      return static_cast<uint32_t>(field.value.siVal);
    case kNvmlValueTypeDouble:
      if (!(field.value.dVal >= 0)) return std::nullopt;
      return static_cast<uint32_t>(std::lround(field.value.dVal));
    default:
      return std::nullopt;
  }
}

// Calls an NVML list getter (count in/out, then buffer), growing the buffer while the driver
// answers INSUFFICIENT_SIZE.
template <typename Getter>
nvmlReturn_t read_list(Getter getter, std::vector<uint32_t>* out) {
  std::vector<unsigned int> buffer(128);
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned int count = static_cast<unsigned int>(buffer.size());
    nvmlReturn_t rc = getter(&count, buffer.data());
    if (rc == kNvmlErrorInsufficientSize && count > buffer.size()) {
      buffer.resize(count);
      continue;
    }
    if (rc != kNvmlSuccess) return rc;
    buffer.resize(std::min<size_t>(count, buffer.size()));
    out->assign(buffer.begin(), buffer.end());
    return kNvmlSuccess;
  }
  return kNvmlErrorInsufficientSize;
}

}  // namespace

NvmlGpu::NvmlGpu(std::shared_ptr<NvmlLibrary> library, nvmlDevice_t handle, int index)
    : library_(std::move(library)), handle_(handle), index_(index) {}

Result<std::unique_ptr<NvmlGpu>> NvmlGpu::open(std::shared_ptr<NvmlLibrary> library, int index) {
  nvmlDevice_t handle = nullptr;
  const NvmlApi& api = library->api();
  ZEUS_TRY(library->check(api.device_get_handle_by_index(static_cast<unsigned int>(index), &handle),
                          "getting the handle of GPU " + std::to_string(index)));
  std::unique_ptr<NvmlGpu> gpu(new NvmlGpu(library, handle, index));

  char buffer[kNvmlDeviceNameBufferSize] = {};
  ZEUS_TRY(gpu->call(api.device_get_name, "nvmlDeviceGetName", "reading the name", buffer,
                     kNvmlDeviceNameBufferSize));
  gpu->name_ = buffer;
  char uuid[kNvmlDeviceUuidBufferSize] = {};
  ZEUS_TRY(gpu->call(api.device_get_uuid, "nvmlDeviceGetUUID", "reading the UUID", uuid,
                     kNvmlDeviceUuidBufferSize));
  gpu->uuid_ = uuid;
  // lspci -D form from the domain, bus and device numbers (function 0, as NVML reports the GPU).
  nvml::nvmlPciInfo_t pci{};
  if (gpu->call(api.device_get_pci_info, "nvmlDeviceGetPciInfo_v3", "reading the PCI address",
                &pci)) {
    char address[32] = {};
    std::snprintf(address, sizeof address, "%04x:%02x:%02x.0", pci.domain & 0xffffu,
                  pci.bus & 0xffu, pci.device & 0xffu);
    gpu->pci_address_ = address;
  }

  unsigned int arch_code = 0;
  auto arch = gpu->call(api.device_get_architecture, "nvmlDeviceGetArchitecture",
                        "reading the architecture", &arch_code);
  if (arch) gpu->architecture_ = architecture_from_nvml(arch_code);
  if (api.device_get_total_energy_consumption == nullptr) {
    gpu->energy_counter_missing_ = "the driver lacks nvmlDeviceGetTotalEnergyConsumption";
  } else if (arch && arch_code < kNvmlArchVolta) {
    gpu->energy_counter_missing_ = "NVML provides one from Volta on";
  } else {
    // Probe the counter as Python Zeus does: some boards and vGPUs answer
    // NOT_SUPPORTED on Volta and newer. Other failures (a transient error) leave the counter to
    // report them at the first real read; with an unknown architecture only a success counts.
    unsigned long long energy_mj = 0;
    const nvmlReturn_t rc = api.device_get_total_energy_consumption(handle, &energy_mj);
    if (rc == kNvmlErrorNotSupported || rc == kNvmlErrorFunctionNotFound ||
        (!arch && rc != kNvmlSuccess)) {
      gpu->energy_counter_missing_ =
          "nvmlDeviceGetTotalEnergyConsumption answers " + nvml_return_name(rc);
    }
  }
  gpu->has_energy_counter_ = gpu->energy_counter_missing_.empty();
  return gpu;
}

std::string NvmlGpu::describe(std::string_view operation) const {
  std::string text(operation);
  text += " of GPU ";
  text += std::to_string(index_);
  return text;
}

Result<PowerLimitRangeMw> NvmlGpu::power_limit_range_mw() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (range_mw_) return *range_mw_;
  }
  unsigned int min_mw = 0;
  unsigned int max_mw = 0;
  ZEUS_TRY(call(library_->api().device_get_power_management_limit_constraints,
                "nvmlDeviceGetPowerManagementLimitConstraints", "reading the power limit range",
                &min_mw, &max_mw));
  PowerLimitRangeMw range{min_mw, max_mw};
  std::lock_guard<std::mutex> lock(mutex_);
  range_mw_ = range;
  return range;
}

Result<uint32_t> NvmlGpu::default_power_limit_mw() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (default_limit_mw_) return *default_limit_mw_;
  }
  unsigned int limit_mw = 0;
  ZEUS_TRY(call(library_->api().device_get_power_management_default_limit,
                "nvmlDeviceGetPowerManagementDefaultLimit", "reading the default power limit",
                &limit_mw));
  std::lock_guard<std::mutex> lock(mutex_);
  default_limit_mw_ = limit_mw;
  return limit_mw;
}

Result<uint32_t> NvmlGpu::power_limit_mw() {
  unsigned int limit_mw = 0;
  ZEUS_TRY(call(library_->api().device_get_power_management_limit,
                "nvmlDeviceGetPowerManagementLimit", "reading the power limit", &limit_mw));
  return limit_mw;
}

Result<void> NvmlGpu::set_power_limit_mw(uint32_t limit_mw) {
  auto range = power_limit_range_mw();
  if (!range) return fail(range.error());
  if (limit_mw < range->min_mw || limit_mw > range->max_mw) {
    return fail(ErrorCode::kInvalidArgument,
                "power limit " + watts(limit_mw) + " is outside the range of GPU " +
                    std::to_string(index_) + " (" + name_ + "): [" + watts(range->min_mw) + ", " +
                    watts(range->max_mw) + "]");
  }
  return call(library_->api().device_set_power_management_limit,
              "nvmlDeviceSetPowerManagementLimit", "setting the power limit to " + watts(limit_mw),
              limit_mw);
}

Result<void> NvmlGpu::reset_power_limit() {
  auto limit_mw = default_power_limit_mw();
  if (!limit_mw) return fail(limit_mw.error());
  return set_power_limit_mw(*limit_mw);
}

namespace {
// Failures that are the GPU's or the driver's state, not a field the driver lacks.
bool hard_failure(nvmlReturn_t rc) {
  return rc == kNvmlErrorGpuIsLost || rc == kNvmlErrorNoPermission ||
         rc == kNvmlErrorDriverNotLoaded || rc == kNvmlErrorUninitialized;
}
// The driver does not know the field (or scope) at all.
bool field_unknown(nvmlReturn_t rc) {
  return rc == kNvmlErrorNotSupported || rc == kNvmlErrorInvalidArgument;
}
}  // namespace

nvmlReturn_t NvmlGpu::read_power_field(unsigned int field_id, unsigned int scope,
                                       uint32_t* value_mw) const {
  nvmlFieldValue_t field{};
  field.fieldId = field_id;
  field.scopeId = scope;
  const nvmlReturn_t rc = library_->api().device_get_field_values(handle_, 1, &field);
  const nvmlReturn_t failure = rc != kNvmlSuccess ? rc : field.nvmlReturn;
  if (failure != kNvmlSuccess) return failure;
  auto value = field_value_mw(field);
  if (!value) return kNvmlErrorUnknown;
  *value_mw = *value;
  return kNvmlSuccess;
}

Result<int> NvmlGpu::resolve_power_scope(unsigned int field_id, std::atomic<int>* cache,
                                         std::string_view operation, uint32_t* value_mw) {
  const nvmlReturn_t gpu = read_power_field(field_id, kNvmlPowerScopeGpu, value_mw);
  if (gpu == kNvmlSuccess) {
    cache->store(static_cast<int>(kNvmlPowerScopeGpu));
    return static_cast<int>(kNvmlPowerScopeGpu);
  }
  if (hard_failure(gpu)) return fail(library_->error(gpu, describe(operation)));
  const nvmlReturn_t module = read_power_field(field_id, kNvmlPowerScopeModule, value_mw);
  if (module == kNvmlSuccess) {
    log_warning("GPU " + std::to_string(index_) + " (" + name_ +
                ") does not answer GPU-scope power for NVML field " + std::to_string(field_id) +
                "; using the module scope, so its power and energy cover the whole module (CPU "
                "+ GPU), as expected on C2C superchips like Grace Hopper");
    cache->store(static_cast<int>(kNvmlPowerScopeModule));
    return static_cast<int>(kNvmlPowerScopeModule);
  }
  if (hard_failure(module)) return fail(library_->error(module, describe(operation)));
  if (field_unknown(gpu) && field_unknown(module)) {
    power_fields_usable_.store(false, std::memory_order_relaxed);
  }
  return -1;
}

Result<uint32_t> NvmlGpu::power_mw(unsigned int field_id, std::string_view operation) {
  const NvmlApi& api = library_->api();
  std::atomic<int>* cache = field_id == kNvmlFieldPowerInstant ? &instant_scope_ : &average_scope_;
  if (api.device_get_field_values != nullptr &&
      power_fields_usable_.load(std::memory_order_relaxed)) {
    uint32_t value_mw = 0;
    const int scope = cache->load();
    if (scope < 0) {
      // The probe that resolves the scope is this reading.
      auto resolved = resolve_power_scope(field_id, cache, operation, &value_mw);
      if (!resolved) return fail(resolved.error());
      if (*resolved >= 0) return value_mw;
    } else {
      const nvmlReturn_t failure =
          read_power_field(field_id, static_cast<unsigned int>(scope), &value_mw);
      if (failure == kNvmlSuccess) return value_mw;
      // GPU lost, permission and the like are real failures; anything else means the driver
      // does not know the field, and the plain reading serves instead.
      if (hard_failure(failure)) return fail(library_->error(failure, describe(operation)));
      if (field_unknown(failure)) power_fields_usable_.store(false, std::memory_order_relaxed);
    }
  }
  unsigned int power_mw = 0;
  ZEUS_TRY(call(api.device_get_power_usage, "nvmlDeviceGetPowerUsage", operation, &power_mw));
  return power_mw;
}

PowerScope NvmlGpu::power_scope() {
  if (instant_scope_.load() < 0 && library_->api().device_get_field_values != nullptr &&
      power_fields_usable_.load(std::memory_order_relaxed)) {
    uint32_t ignored_mw = 0;
    (void)resolve_power_scope(kNvmlFieldPowerInstant, &instant_scope_, "reading the instant power",
                              &ignored_mw);
  }
  return instant_scope_.load() == static_cast<int>(kNvmlPowerScopeModule) ? PowerScope::kModule
                                                                          : PowerScope::kGpu;
}

Result<uint32_t> NvmlGpu::instant_power_mw() {
  return power_mw(kNvmlFieldPowerInstant, "reading the instant power");
}

Result<uint32_t> NvmlGpu::average_power_mw() {
  return power_mw(kNvmlFieldPowerAverage, "reading the average power");
}

Result<uint32_t> NvmlGpu::memory_average_power_mw() {
  const NvmlApi& api = library_->api();
  const std::string_view operation = "reading the average memory power";
  if (api.device_get_field_values == nullptr) {
    return fail(library_->missing_function("nvmlDeviceGetFieldValues", describe(operation)));
  }
  uint32_t value_mw = 0;
  const nvmlReturn_t failure =
      read_power_field(kNvmlFieldPowerAverage, kNvmlPowerScopeMemory, &value_mw);
  if (failure == kNvmlErrorUnknown) {
    return fail(ErrorCode::kNotSupported,
                describe(operation) + ": the driver answered a value that is not a power");
  }
  if (failure != kNvmlSuccess) return fail(library_->error(failure, describe(operation)));
  return value_mw;
}

Result<uint32_t> NvmlGpu::sm_clock_mhz() {
  unsigned int mhz = 0;
  ZEUS_TRY(call(library_->api().device_get_clock_info, "nvmlDeviceGetClockInfo",
                "reading the SM clock", kNvmlClockSm, &mhz));
  return static_cast<uint32_t>(mhz);
}

Result<int> NvmlGpu::temperature_c() {
  unsigned int celsius = 0;
  ZEUS_TRY(call(library_->api().device_get_temperature, "nvmlDeviceGetTemperature",
                "reading the temperature", kNvmlTemperatureGpu, &celsius));
  return static_cast<int>(celsius);
}

Result<uint64_t> NvmlGpu::total_energy_mj() {
  if (!has_energy_counter_) {
    return fail(ErrorCode::kNotSupported,
                "GPU " + std::to_string(index_) + " (" + name_ + ", " +
                    architecture_name(architecture_) + ") has no energy counter (" +
                    energy_counter_missing_ + "); measure by sampling power instead");
  }
  unsigned long long energy_mj = 0;
  ZEUS_TRY(call(library_->api().device_get_total_energy_consumption,
                "nvmlDeviceGetTotalEnergyConsumption", "reading the energy counter", &energy_mj));
  return static_cast<uint64_t>(energy_mj);
}

Result<bool> NvmlGpu::persistence_mode() {
  int mode = kNvmlFeatureDisabled;
  ZEUS_TRY(call(library_->api().device_get_persistence_mode, "nvmlDeviceGetPersistenceMode",
                "reading the persistence mode", &mode));
  return mode == kNvmlFeatureEnabled;
}

Result<void> NvmlGpu::set_persistence_mode(bool enabled) {
  return call(library_->api().device_set_persistence_mode, "nvmlDeviceSetPersistenceMode",
              enabled ? "enabling persistence mode" : "disabling persistence mode",
              enabled ? kNvmlFeatureEnabled : kNvmlFeatureDisabled);
}

Result<std::vector<uint32_t>> NvmlGpu::supported_memory_clocks_mhz() {
  auto getter = library_->api().device_get_supported_memory_clocks;
  const char* operation = "listing the supported memory clocks";
  if (getter == nullptr) {
    return fail(
        library_->missing_function("nvmlDeviceGetSupportedMemoryClocks", describe(operation)));
  }
  std::vector<uint32_t> clocks_mhz;
  nvmlReturn_t rc = read_list(
      [&](unsigned int* count, unsigned int* clocks) { return getter(handle_, count, clocks); },
      &clocks_mhz);
  if (rc != kNvmlSuccess) return fail(library_->error(rc, describe(operation)));
  std::sort(clocks_mhz.begin(), clocks_mhz.end(), std::greater<>());
  return clocks_mhz;
}

Result<std::vector<uint32_t>> NvmlGpu::supported_sm_clocks_mhz() {
  auto memory_clocks_mhz = supported_memory_clocks_mhz();
  if (!memory_clocks_mhz) return fail(memory_clocks_mhz.error());
  if (memory_clocks_mhz->empty()) {
    return fail(ErrorCode::kNotSupported, "GPU " + std::to_string(index_) +
                                              " reports no supported memory clock, so its SM "
                                              "clocks cannot be listed");
  }
  const uint32_t memory_mhz = memory_clocks_mhz->front();  // sorted highest first
  auto getter = library_->api().device_get_supported_graphics_clocks;
  const char* operation = "listing the supported SM clocks";
  if (getter == nullptr) {
    return fail(
        library_->missing_function("nvmlDeviceGetSupportedGraphicsClocks", describe(operation)));
  }
  std::vector<uint32_t> clocks_mhz;
  nvmlReturn_t rc =
      read_list([&](unsigned int* count,
                    unsigned int* clocks) { return getter(handle_, memory_mhz, count, clocks); },
                &clocks_mhz);
  if (rc != kNvmlSuccess) return fail(library_->error(rc, describe(operation)));
  std::sort(clocks_mhz.begin(), clocks_mhz.end(), std::greater<>());
  return clocks_mhz;
}

Result<void> NvmlGpu::lock_sm_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) {
  if (min_mhz > max_mhz) {
    return fail(ErrorCode::kInvalidArgument,
                "cannot lock the SM clocks of GPU " + std::to_string(index_) + ": minimum " +
                    std::to_string(min_mhz) + " MHz is above maximum " + std::to_string(max_mhz) +
                    " MHz");
  }
  return call(library_->api().device_set_gpu_locked_clocks, "nvmlDeviceSetGpuLockedClocks",
              "locking the SM clocks to [" + std::to_string(min_mhz) + ", " +
                  std::to_string(max_mhz) + "] MHz",
              min_mhz, max_mhz);
}

Result<void> NvmlGpu::reset_sm_clocks() {
  return call(library_->api().device_reset_gpu_locked_clocks, "nvmlDeviceResetGpuLockedClocks",
              "resetting the SM clocks");
}

Result<void> NvmlGpu::lock_memory_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) {
  if (min_mhz > max_mhz) {
    return fail(ErrorCode::kInvalidArgument,
                "cannot lock the memory clocks of GPU " + std::to_string(index_) + ": minimum " +
                    std::to_string(min_mhz) + " MHz is above maximum " + std::to_string(max_mhz) +
                    " MHz");
  }
  return call(library_->api().device_set_memory_locked_clocks, "nvmlDeviceSetMemoryLockedClocks",
              "locking the memory clocks to [" + std::to_string(min_mhz) + ", " +
                  std::to_string(max_mhz) + "] MHz",
              min_mhz, max_mhz);
}

Result<void> NvmlGpu::reset_memory_clocks() {
  return call(library_->api().device_reset_memory_locked_clocks,
              "nvmlDeviceResetMemoryLockedClocks", "resetting the memory clocks");
}

Result<std::vector<std::unique_ptr<Gpu>>> open_nvml_gpus(const std::string& library_path,
                                                         std::vector<SkippedGpu>* skipped) {
  auto library = NvmlLibrary::load(library_path);
  if (!library) return fail(library.error());
  unsigned int count = 0;
  ZEUS_TRY((*library)->check((*library)->api().device_get_count(&count), "counting the GPUs"));
  std::vector<std::unique_ptr<Gpu>> gpus;
  gpus.reserve(count);
  std::optional<Error> first_error;
  for (unsigned int index = 0; index < count; ++index) {
    auto gpu = NvmlGpu::open(*library, static_cast<int>(index));
    if (gpu) {
      gpus.push_back(std::move(*gpu));
      continue;
    }
    // One lost or unopenable GPU must not hide the healthy ones.
    if (!first_error) first_error = gpu.error();
    if (skipped != nullptr) skipped->push_back({static_cast<int>(index), gpu.error().message});
  }
  if (gpus.empty() && first_error) return fail(*first_error);  // none usable: say why
  return gpus;
}

Result<std::string> NvmlGpu::pci_address() const {
  if (pci_address_.empty()) {
    return fail(ErrorCode::kNotSupported,
                "GPU " + std::to_string(index_) + ": nvmlDeviceGetPciInfo_v3 did not answer");
  }
  return pci_address_;
}

}  // namespace zeus
