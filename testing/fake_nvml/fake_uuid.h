// The UUID the fake NVML gives a device whose state lacks one, shared by the fake and the test
// helpers that read its state file (testing/fake_nvml_state.h), so both name it the same.
#pragma once

#include <cstdio>
#include <string>

namespace zeus::fake_nvml {

// "GPU-00000000-fake-0000-0000-000000000003" for device 3.
inline std::string default_uuid(size_t index) {
  char uuid[64];
  std::snprintf(uuid, sizeof(uuid), "GPU-00000000-fake-0000-0000-%012zu", index);
  return uuid;
}

}  // namespace zeus::fake_nvml
