#include "governor_flags.h"

#include "cli_util.h"
#include "common/usage_error.h"

namespace zeus::cli {

void governor_options_or_die(const GovernorOptions& options) {
  if (Result<void> valid = options.validate(kGovernorFlags); !valid) {
    die(valid.error().message, kUsageErrorExit);
  }
}

}  // namespace zeus::cli
