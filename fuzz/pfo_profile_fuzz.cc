// Fuzzes the Perseus stage profile reader and what the planner does first with a profile: the
// candidate options and the exponential fit of every (stage, instruction). Any input must give a
// value or a clear error, never a crash, a hang or undefined behaviour.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "perseus/planner/execution_options.h"
#include "perseus/planner/exponential_fit.h"
#include "zeus/perseus/pfo_profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto profile = zeus::pfo::parse_stage_profile(text, "fuzz.csv");
  if (!profile || profile->rows.size() > 256) return 0;
  const int stages = profile->num_stages();
  if (stages < 2 || stages > 16 || !zeus::pfo::check_profile_covers(*profile, stages)) return 0;
  for (int s = 0; s < stages; ++s) {
    for (auto kind : {zeus::pfo::InstructionKind::kForward, zeus::pfo::InstructionKind::kBackward}) {
      auto options = zeus::pfo::candidate_options(profile->rows_of(s, kind), 0.001, 80.0, 0.95);
      if (!options || options->size() > 64) continue;
      std::vector<zeus::pfo::FitPoint> points;
      for (const auto& o : *options) points.push_back({static_cast<double>(o.quant_time), o.effective_energy_j});
      (void)zeus::pfo::fit_exponential(points, 0.001);
    }
  }
  return 0;
}
