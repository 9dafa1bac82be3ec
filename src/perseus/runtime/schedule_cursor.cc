#include "perseus/runtime/schedule_cursor.h"

#include <string>

namespace zeus::pfo {
namespace {

std::string entry_text(const std::pair<std::string, int>& entry) {
  return "('" + entry.first + "', " + std::to_string(entry.second) + " MHz)";
}

}  // namespace

Result<int> ScheduleCursor::on_instruction_begin(std::string_view name) {
  const auto& entries = schedule_.frequencies;
  const std::string rank = "rank " + std::to_string(schedule_.rank);
  if (position_ >= entries.size()) {
    return fail(ErrorCode::kInvalidArgument,
                "the schedule has fewer frequencies than expected: " + rank + "'s lists " +
                    std::to_string(entries.size()) + " instructions per iteration, and '" +
                    std::string(name) + "' began as instruction " + std::to_string(position_ + 1));
  }
  const auto& [expected, mhz] = entries[position_];
  if (expected != name) {
    return fail(ErrorCode::kInvalidArgument,
                rank + "'s schedule expects '" + expected + "' as instruction " +
                    std::to_string(position_ + 1) + " of the iteration, but '" + std::string(name) +
                    "' began");
  }
  ++position_;
  return mhz;
}

Result<void> ScheduleCursor::on_step_end() {
  const size_t consumed = position_;
  position_ = 0;
  const auto& entries = schedule_.frequencies;
  if (consumed < entries.size()) {
    return fail(ErrorCode::kInvalidArgument,
                "the schedule has more frequencies than expected: rank " +
                    std::to_string(schedule_.rank) + "'s iteration ended after " +
                    std::to_string(consumed) + " of its " + std::to_string(entries.size()) +
                    " instructions; the next expected was " + entry_text(entries[consumed]));
  }
  return ok();
}

void ScheduleCursor::reset(FrequencySchedule schedule) {
  schedule_ = std::move(schedule);
  position_ = 0;
}

}  // namespace zeus::pfo
