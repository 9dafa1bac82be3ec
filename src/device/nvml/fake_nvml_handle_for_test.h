// Test helper: holds the fake libnvidia-ml.so.1 open for the duration of a test, so that its
// state (and its call counters) outlive the NvmlLibrary objects the test creates and destroys,
// and reads the counters the fake exports (zeus_fake_nvml_call_count); open_fake_gpus() opens
// the fake's GPUs through the real backend.
#pragma once

#include <dlfcn.h>

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "device/nvml/nvml_gpu.h"

namespace zeus::nvml {

// Every GPU of the fake library at `path`, opened as discover() opens them; an empty list (and a
// failed test) when they cannot be opened.
inline std::vector<std::unique_ptr<Gpu>> open_fake_gpus(const char* path = ZEUS_FAKE_NVML_PATH) {
  auto gpus = open_nvml_gpus(path);
  EXPECT_TRUE(gpus.has_value()) << gpus.error().to_string();
  if (!gpus) return {};
  return std::move(*gpus);
}

class FakeNvmlHandle {
 public:
  explicit FakeNvmlHandle(const std::string& path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(handle_, nullptr) << "cannot open the fake NVML " << path << ": " << dlerror();
    if (handle_ == nullptr) return;
    count_ = reinterpret_cast<long (*)(const char*)>(dlsym(handle_, "zeus_fake_nvml_call_count"));
    reset_ = reinterpret_cast<void (*)()>(dlsym(handle_, "zeus_fake_nvml_reset_call_counts"));
    if (reset_ != nullptr) reset_();
  }
  FakeNvmlHandle(const FakeNvmlHandle&) = delete;
  FakeNvmlHandle& operator=(const FakeNvmlHandle&) = delete;
  ~FakeNvmlHandle() {
    if (handle_ != nullptr) dlclose(handle_);
  }

  // How often `function` was called since construction (or reset()); -1 without the fake.
  long calls(const char* function) const { return count_ != nullptr ? count_(function) : -1; }
  void reset() {
    if (reset_ != nullptr) reset_();
  }

 private:
  void* handle_ = nullptr;
  long (*count_)(const char*) = nullptr;
  void (*reset_)() = nullptr;
};

}  // namespace zeus::nvml
