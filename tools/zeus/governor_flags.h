// The governor's knobs as the command line names them: `zeus proxy --govern` and `zeus simulate
// serving` read the same flags (--ttft-slo, --tpot-slo, --slo-quantile) into one GovernorOptions
// (zeus/serving/serving_governor.h), and both check it with GovernorOptions::validate() through
// governor_options_or_die(), so a value one refuses the other refuses too, naming the flag.
#pragma once

#include "zeus/serving/serving_governor.h"

namespace zeus::cli {

// GovernorOptions' fields that a flag sets, and the flag.
inline constexpr GovernorOptions::KnobName kGovernorFlags[] = {
    {"ttft_slo_s", "--ttft-slo"},
    {"tpot_slo_s", "--tpot-slo"},
    {"quantile", "--slo-quantile"},
};

// Exits 2 (a usage error) with validate()'s message when a knob is out of its range.
void governor_options_or_die(const GovernorOptions& options);

}  // namespace zeus::cli
