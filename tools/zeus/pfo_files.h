// The files of `zeus pfo plan --out DIR` and `zeus pfo choose`:
//   frontier.csv   `time,energy` (s, J of one pipeline iteration), one row per plan, slowest first;
//   plans.bin      every plan's clocks as changes from the plan before, with whole plans every
//                  256 (zeus/perseus/pfo_plan_store.h; `zeus pfo export-plan` writes plans in the
// JSON
//                  form {"index", "time", "energy", "frequencies": [[MHz per instruction in
//                  execution order] per stage]} of the plans.jsonl that older versions wrote);
//   summary.json   options, T_max/T_min/T*, the all-max-clock baseline and saving, the schedule
//                  (instruction names per stage), the T_max schedule's clocks (every instruction
//                  at its slowest: a candidate apart from the plans) and each operation's options
//                  and fit;
//   schedule JSON  (pfo choose) {"time", "energy", "stages", "microbatches", "frequencies":
//                  [[["forward"|"backward", MHz], ...] per stage]}: Zeus's PointSolution shape.
// Writing goes to a temporary folder renamed into place, so a failure leaves no partial DIR.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zeus/common/result.h"
#include "zeus/perseus/pfo_planner.h"
#include "zeus/perseus/pfo_profile.h"
#include "zeus/perseus/pfo_straggler_policy.h"

namespace zeus::cli {

// Shortest decimal text that reads back to the same double (as Python's repr).
std::string shortest_double(double value);

// Writes the three files of a frontier into `dir` (which must not exist or be an empty folder:
// output_folder() of output_path.h says why not).
Result<void> write_plan_files(const std::filesystem::path& dir, const pfo::Frontier& frontier,
                              std::span<const pfo::GlobalClockPlan> global_clocks,
                              const nlohmann::json& summary);

// Writes a schedule file (pfo choose) to `path`, a new or regular file, by rename.
Result<void> write_schedule_file(const std::filesystem::path& path, const nlohmann::json& schedule);

// summary.json's content.
nlohmann::json plan_summary(const pfo::Frontier& frontier, const pfo::StageProfile& profile,
                            const std::string& profile_path);

struct PlanRecord {
  double time_s = 0.0;
  double energy_j = 0.0;
  std::vector<std::vector<int>> frequencies;
};

// Reads plans.bin, or an older folder's plans.jsonl (every plan's time and energy; the frequencies
// of plan `keep` only, -1 none).
Result<std::vector<PlanRecord>> read_plans(const std::filesystem::path& dir, long keep = -1);

// One plan as a line of the old plans.jsonl (`zeus pfo export-plan`).
nlohmann::json plan_line(std::size_t index, const PlanRecord& plan);

// What `zeus pfo choose` takes from summary.json.
struct PlanFolder {
  nlohmann::json stages;
  nlohmann::json microbatches;
  std::vector<std::vector<std::string>> schedule;  // instruction names per stage
  PlanRecord t_max;  // every instruction at its slowest clock (not a row of plans.jsonl)
};
Result<PlanFolder> read_plan_folder(const std::filesystem::path& dir);

}  // namespace zeus::cli
