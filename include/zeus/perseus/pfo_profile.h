// Stage profile of a pipeline-parallel training job: the input of the Perseus planner.
//
// For each pipeline stage (0-based), each instruction type (forward or backward of one
// microbatch) and each locked SM clock, the mean time and energy of one execution of that
// instruction at that clock, measured during real training. CSV columns:
//   stage,instruction,frequency,time,energy
// (stage int, instruction `forward`|`backward`, frequency MHz int, time s, energy J); Zeus 0.16's
// InstructionProfilingResult.to_csv adds `rank,dp_rank,pp_rank,tp_rank` columns in front, which
// are accepted and ignored. Column order does not matter.
// Units: MHz, seconds, joules.
// Thread-safety: values and free functions.
// Failure: kInvalidArgument naming the line and column (non-numeric cell, unknown instruction,
// duplicate clock), or what is missing (a stage of 0..S-1, an instruction of a stage).
//
//   auto profile = zeus::pfo::parse_stage_profile(csv_text, "gpt3.csv");
//   if (!profile) die(profile.error());
//   ZEUS_TRY(zeus::pfo::check_profile_covers(*profile, /*num_stages=*/8));
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "zeus/common/result.h"

namespace zeus::pfo {

enum class InstructionKind { kForward, kBackward };

// "forward" or "backward" (the profile's and Zeus's instruction names).
std::string_view instruction_name(InstructionKind kind);

// One profiled (stage, instruction, clock).
struct ProfileRow {
  int stage = 0;
  InstructionKind instruction = InstructionKind::kForward;
  int frequency_mhz = 0;
  double time_s = 0.0;
  double energy_j = 0.0;
};

struct StageProfile {
  std::vector<ProfileRow> rows;  // in file order
  // 1 + the largest stage id.
  int num_stages() const;
  // The rows of one (stage, instruction), in file order.
  std::vector<ProfileRow> rows_of(int stage, InstructionKind kind) const;
  // The row of one (stage, instruction, clock), or nullptr.
  const ProfileRow* find(int stage, InstructionKind kind, int frequency_mhz) const;
};

// Parses the CSV text above. `source` names the file in messages.
Result<StageProfile> parse_stage_profile(std::string_view csv_text, std::string_view source);

// Checks that every stage 0..num_stages-1 has at least two profiled clocks of both instructions
// (a single clock leaves nothing to plan); kInvalidArgument naming what is missing.
Result<void> check_profile_covers(const StageProfile& profile, int num_stages);

}  // namespace zeus::pfo
