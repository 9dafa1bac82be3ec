// NvmlLibrary: libnvidia-ml.so.1 loaded with dlopen, its entry-point table filled and NVML
// initialised; nvmlShutdown runs when the last owner (a shared_ptr held by every NvmlGpu) goes.
//
// The loader prefers `_v2` symbols where one exists with the same signature (nvmlInit_v2,
// nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2) and falls back to the plain name. Only
// init, shutdown, error string, device count and handle lookup are required; any other entry
// point may be missing (old driver) and fails only the call that needs it.
// Thread-safety: immutable after load(); check() and error() may be called from any thread.
// Failure: load() returns Unavailable when the library cannot be opened, is not NVML, or
// nvmlInit fails (the message says why and what to do).
//
//   auto library = NvmlLibrary::load("libnvidia-ml.so.1");
//   if (!library) return fail(library.error());
//   ZEUS_TRY((*library)->check((*library)->api().device_get_count(&n), "counting GPUs"));
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/dynamic_library.h"
#include "device/nvml/nvml_api.h"
#include "zeus/common/result.h"

namespace zeus::nvml {

class NvmlLibrary {
 public:
  // Opens `path` (a soname or a file path), resolves the entry points and calls nvmlInit.
  static Result<std::shared_ptr<NvmlLibrary>> load(const std::string& path);

  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;
  // Calls nvmlShutdown.
  ~NvmlLibrary();

  // The entry points; optional ones may be null.
  const NvmlApi& api() const { return api_; }
  // The path the library was loaded from.
  const std::string& path() const { return library_.path(); }

  // ok() for NVML_SUCCESS, otherwise the mapped Error for `operation` (e.g. "reading the power
  // limit of GPU 0"), with NVML's own message.
  Result<void> check(nvmlReturn_t code, std::string_view operation) const {
    if (code == kNvmlSuccess) return ok();
    return fail(error(code, operation));
  }
  // The mapped Error for a failed call; `code` must not be NVML_SUCCESS.
  Error error(nvmlReturn_t code, std::string_view operation) const;
  // NotSupported "function not found" Error for an entry point this library lacks.
  Error missing_function(std::string_view symbol, std::string_view operation) const;

 private:
  NvmlLibrary(DynamicLibrary library, const NvmlApi& api)
      : library_(std::move(library)), api_(api) {}

  DynamicLibrary library_;
  NvmlApi api_;
};

}  // namespace zeus::nvml
