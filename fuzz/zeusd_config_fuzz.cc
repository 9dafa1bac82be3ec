// Fuzzes zeusd's config file reader (toml++ plus our strict key checks): any bytes give
// arguments or a clear error, never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "zeusd/config_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)zeus::zeusd::config_arguments(std::string_view(reinterpret_cast<const char*>(data), size),
                                      "fuzz.toml");
  return 0;
}
