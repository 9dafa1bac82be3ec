// Names of GPU power scopes.
#include <string>

#include "zeus/device/device.h"

namespace zeus {

std::string power_scope_name(PowerScope scope) {
  return scope == PowerScope::kModule ? "module" : "gpu";
}

}  // namespace zeus
