// Names of GPU architectures and vendors.
#include <string>

#include "zeus/device/device.h"

namespace zeus {

std::string architecture_name(GpuArchitecture architecture) {
  switch (architecture) {
    case GpuArchitecture::kKepler:
      return "Kepler";
    case GpuArchitecture::kMaxwell:
      return "Maxwell";
    case GpuArchitecture::kPascal:
      return "Pascal";
    case GpuArchitecture::kVolta:
      return "Volta";
    case GpuArchitecture::kTuring:
      return "Turing";
    case GpuArchitecture::kAmpere:
      return "Ampere";
    case GpuArchitecture::kAda:
      return "Ada";
    case GpuArchitecture::kHopper:
      return "Hopper";
    case GpuArchitecture::kBlackwell:
      return "Blackwell";
    case GpuArchitecture::kAmd:
      return "AMD";
    case GpuArchitecture::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::string vendor_name(GpuVendor vendor) {
  switch (vendor) {
    case GpuVendor::kNvidia:
      return "nvidia";
    case GpuVendor::kAmd:
      return "amd";
    case GpuVendor::kReplay:
      return "replay";
  }
  return "unknown";
}

}  // namespace zeus
