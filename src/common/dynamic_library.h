// DynamicLibrary: a shared library opened at run time with dlopen, closed on destruction.
//
// Vendor libraries (NVML, rocm_smi) are loaded through this so that the build needs no vendor SDK
// and a machine without the driver gets a clear Unavailable error. Move-only.
// Thread-safety: symbol() may be called from several threads.
//
//   auto lib = DynamicLibrary::open("libnvidia-ml.so.1");
//   if (!lib) return fail(lib.error());
//   auto init = lib->symbol<int (*)()>("nvmlInit_v2");
#pragma once

#include <string>

#include "zeus/common/result.h"

namespace zeus {

class DynamicLibrary {
 public:
  // dlopen(path, RTLD_NOW | RTLD_LOCAL). Unavailable with dlerror()'s text when it fails.
  static Result<DynamicLibrary> open(const std::string& path);

  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  ~DynamicLibrary();

  // The address of `name`; NotSupported ("function not found") when the library lacks it.
  Result<void*> raw_symbol(const std::string& name) const;

  template <typename Fn>
  Result<Fn> symbol(const std::string& name) const {
    auto raw = raw_symbol(name);
    if (!raw) return fail(raw.error());
    return reinterpret_cast<Fn>(*raw);
  }

  // The address of `name`, or nullptr when missing (for optional entry points).
  void* find(const std::string& name) const;

  // find(name) cast to the function pointer type of `*slot` and stored there (nullptr when
  // missing): how a table of a vendor library's entry points is filled.
  template <typename Fn>
  void find_into(const std::string& name, Fn* slot) const {
    *slot = reinterpret_cast<Fn>(find(name));
  }

  const std::string& path() const { return path_; }

  // The file the dynamic loader opened (an absolute path, symlinks resolved), e.g.
  // /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15 for "libnvidia-ml.so.1"; path() when the
  // loader cannot say.
  std::string loaded_file() const;

 private:
  DynamicLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_ = nullptr;
  std::string path_;
};

}  // namespace zeus
