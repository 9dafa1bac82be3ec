#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "common/csv_table.h"
#include "zeus/perseus/pfo_profile.h"

namespace zeus::pfo {
namespace {

std::string at_line(const CsvTable& table, std::size_t row) {
  return table.source() + " line " + std::to_string(table.line_of(row));
}

// The cell as an integer (stage, clock); kInvalidArgument naming line and column otherwise.
Result<int> whole_cell(const CsvTable& table, std::size_t row, int column, std::string_view name) {
  auto value = table.number(row, column, name);
  if (!value) return fail(value.error());
  if (*value != std::floor(*value) || *value < 0 || *value > 1e9) {
    return fail(ErrorCode::kInvalidArgument, at_line(table, row) + ": column " + std::string(name) +
                                                 ": '" + std::string(table.cell(row, column)) +
                                                 "' is not a non-negative whole number");
  }
  return static_cast<int>(*value);
}

}  // namespace

std::string_view instruction_name(InstructionKind kind) {
  return kind == InstructionKind::kForward ? "forward" : "backward";
}

int StageProfile::num_stages() const {
  int stages = 0;
  for (const ProfileRow& row : rows) stages = std::max(stages, row.stage + 1);
  return stages;
}

std::vector<ProfileRow> StageProfile::rows_of(int stage, InstructionKind kind) const {
  std::vector<ProfileRow> out;
  for (const ProfileRow& row : rows) {
    if (row.stage == stage && row.instruction == kind) out.push_back(row);
  }
  return out;
}

const ProfileRow* StageProfile::find(int stage, InstructionKind kind, int frequency_mhz) const {
  for (const ProfileRow& row : rows) {
    if (row.stage == stage && row.instruction == kind && row.frequency_mhz == frequency_mhz)
      return &row;
  }
  return nullptr;
}

Result<StageProfile> parse_stage_profile(std::string_view csv_text, std::string_view source) {
  auto table = CsvTable::parse(csv_text, source);
  if (!table) return fail(table.error());
  auto columns = table->require_columns({"stage", "instruction", "frequency", "time", "energy"});
  if (!columns) return fail(columns.error());
  const std::vector<int>& col = *columns;
  StageProfile profile;
  std::set<std::tuple<int, int, int>> seen;
  for (std::size_t row = 0; row < table->num_rows(); ++row) {
    ProfileRow out;
    auto stage = whole_cell(*table, row, col[0], "stage");
    if (!stage) return fail(stage.error());
    out.stage = *stage;
    std::string_view name = table->cell(row, col[1]);
    if (name == "forward") {
      out.instruction = InstructionKind::kForward;
    } else if (name == "backward") {
      out.instruction = InstructionKind::kBackward;
    } else {
      return fail(ErrorCode::kInvalidArgument, at_line(*table, row) + ": column instruction: '" +
                                                   std::string(name) +
                                                   "' is neither 'forward' nor 'backward'");
    }
    auto frequency = whole_cell(*table, row, col[2], "frequency");
    if (!frequency) return fail(frequency.error());
    if (*frequency == 0) {
      return fail(ErrorCode::kInvalidArgument,
                  at_line(*table, row) + ": column frequency: 0 MHz is not a clock");
    }
    out.frequency_mhz = *frequency;
    auto time = table->number(row, col[3], "time");
    if (!time) return fail(time.error());
    auto energy = table->number(row, col[4], "energy");
    if (!energy) return fail(energy.error());
    if (*time <= 0.0 || *time > 1e6) {
      return fail(ErrorCode::kInvalidArgument,
                  at_line(*table, row) + ": column time: " + std::string(table->cell(row, col[3])) +
                      " s; an instruction takes a positive time (seconds, below 1e6)");
    }
    if (*energy < 0.0 || *energy > 1e12) {
      return fail(ErrorCode::kInvalidArgument,
                  at_line(*table, row) +
                      ": column energy: " + std::string(table->cell(row, col[4])) +
                      " J is not a plausible energy (joules, 0 to 1e12)");
    }
    out.time_s = *time;
    out.energy_j = *energy;
    if (!seen.insert({out.stage, static_cast<int>(out.instruction), out.frequency_mhz}).second) {
      return fail(ErrorCode::kInvalidArgument,
                  at_line(*table, row) + ": stage " + std::to_string(out.stage) + " " +
                      std::string(name) + " at " + std::to_string(out.frequency_mhz) +
                      " MHz appears twice (average the measurements into one row)");
    }
    profile.rows.push_back(out);
  }
  if (profile.rows.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                std::string(source) + ": no data rows after the header");
  }
  return profile;
}

Result<void> check_profile_covers(const StageProfile& profile, int num_stages) {
  std::map<std::pair<int, int>, int> clocks;
  for (const ProfileRow& row : profile.rows)
    ++clocks[{row.stage, static_cast<int>(row.instruction)}];
  for (int stage = 0; stage < num_stages; ++stage) {
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      auto found = clocks.find({stage, static_cast<int>(kind)});
      const int count = found == clocks.end() ? 0 : found->second;
      if (count == 0) {
        return fail(ErrorCode::kInvalidArgument,
                    "the profile has no " + std::string(instruction_name(kind)) +
                        " rows for stage " + std::to_string(stage) + " (it must cover stages 0.." +
                        std::to_string(num_stages - 1) + "; check --stages)");
      }
      if (count < 2) {
        return fail(ErrorCode::kInvalidArgument,
                    "stage " + std::to_string(stage) + " " + std::string(instruction_name(kind)) +
                        " was profiled at a single clock; the planner needs several clocks per "
                        "instruction to trade time for energy (profile more clocks)");
      }
    }
  }
  if (profile.num_stages() > num_stages) {
    return fail(ErrorCode::kInvalidArgument,
                "the profile has stages up to " + std::to_string(profile.num_stages() - 1) +
                    " but --stages is " + std::to_string(num_stages) + " (they must agree)");
  }
  return ok();
}

}  // namespace zeus::pfo
