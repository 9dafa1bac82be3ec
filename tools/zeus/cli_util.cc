#include "cli_util.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "zeus/zeusd_client/zeusd_client.h"

namespace zeus::cli {

void die(const std::string& message, int exit_code) {
  std::cerr << "zeus: " << bound_message(message, kMaxErrorBytes) << "\n";
  throw CLI::RuntimeError(exit_code);
}

void die_if_directory(const std::string& path, const std::string& what, const std::string& fix) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) {
    die(what + " '" + echo_value(path) + "' is a directory; " + fix);
  }
}

bool report_lost_stdout() {
  std::cout.flush();
  if (std::cout.good()) return false;
  std::cerr << "zeus: writing to stdout failed (was the reading end of the pipe closed?); "
               "the output is incomplete\n";
  return true;
}

Devices discover_or_die(bool want_gpus, bool want_cpus) {
  DiscoverOptions options = DiscoverOptions::from_environment();
  options.want_gpus = want_gpus;
  options.want_cpus = want_cpus;
  // Through zeusd when ZEUSD_SOCK_PATH or ZEUSD_HOST_PORT (+ ZEUSD_TOKEN) is set.
  return value_or_die(discover_devices(options));
}

std::string gpu_backend_reasons(const Devices& devices) {
  std::string reasons;
  for (const auto& b : devices.backends) {
    if (b.backend == "rapl") continue;
    reasons += (reasons.empty() ? "" : "; ") + b.backend + ": " + b.detail;
  }
  return reasons.empty() ? "no GPU backend was tried" : reasons;
}

std::string format_fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  // A negative value that rounds to zero prints as "-0.00"; zero has no sign.
  if (buffer[0] == '-' && std::strspn(buffer + 1, "0.") == std::strlen(buffer + 1)) {
    return buffer + 1;
  }
  return buffer;
}

std::string pad_left(const std::string& text, size_t width) {
  return std::string(text.size() < width ? width - text.size() : 1, ' ') + text;
}

}  // namespace zeus::cli
