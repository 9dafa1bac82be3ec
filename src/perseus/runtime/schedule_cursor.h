// ScheduleCursor: walks one rank's FrequencySchedule instruction by instruction, one iteration
// at a time (the Perseus client's schedule check, docs/perseus.md, "Runtime").
//
// Each instruction that begins takes the schedule's next (name, clock) pair: its name must be the
// one that began, and the schedule must not be exhausted; each iteration's end must find the
// schedule fully consumed, and rewinds it. A pure value: no I/O, no clock.
// Units: MHz (0: leave the clock as it is). Thread-safety: a plain value (one thread).
// Failure: InvalidArgument naming the rank, the position and both names.
//
//   ScheduleCursor cursor(schedule);                       // from GET /schedule
//   auto mhz = cursor.on_instruction_begin("forward");    // the clock to request
//   auto done = cursor.on_step_end();                     // all consumed? rewinds
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>

#include "zeus/common/result.h"
#include "zeus/perseus/pfo_runtime_types.h"

namespace zeus::pfo {

class ScheduleCursor {
 public:
  explicit ScheduleCursor(FrequencySchedule schedule) : schedule_(std::move(schedule)) {}

  // The clock for instruction `name`, the schedule's next entry, which it consumes.
  // InvalidArgument (nothing consumed) when the schedule is exhausted ("fewer frequencies than
  // expected") or its next entry names another instruction.
  Result<int> on_instruction_begin(std::string_view name);
  // Rewinds for the next iteration; InvalidArgument when entries were left unconsumed ("more
  // frequencies than expected"), rewound all the same.
  Result<void> on_step_end();

  // Replaces the schedule (a new round from the server) and rewinds.
  void reset(FrequencySchedule schedule);
  const FrequencySchedule& schedule() const { return schedule_; }
  // Entries consumed in the current iteration.
  size_t position() const { return position_; }

 private:
  FrequencySchedule schedule_;
  size_t position_ = 0;
};

}  // namespace zeus::pfo
