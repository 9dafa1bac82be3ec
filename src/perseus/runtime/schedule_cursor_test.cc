#include "perseus/runtime/schedule_cursor.h"

#include <gtest/gtest.h>

namespace zeus::pfo {
namespace {

FrequencySchedule two_instructions() { return {3, {{"forward", 1410}, {"backward", 0}}}; }

TEST(ScheduleCursorTest, HandsOutEachIterationsClocksInOrderAndRewinds) {
  ScheduleCursor cursor(two_instructions());
  for (int iteration = 0; iteration < 3; ++iteration) {
    EXPECT_EQ(cursor.on_instruction_begin("forward").value(), 1410);
    EXPECT_EQ(cursor.position(), 1u);
    EXPECT_EQ(cursor.on_instruction_begin("backward").value(), 0);  // 0: leave as is
    ASSERT_TRUE(cursor.on_step_end().has_value());
    EXPECT_EQ(cursor.position(), 0u);
  }
}

TEST(ScheduleCursorTest, AnExhaustedScheduleIsFewerFrequenciesThanExpected) {
  ScheduleCursor cursor(two_instructions());
  ASSERT_TRUE(cursor.on_instruction_begin("forward").has_value());
  ASSERT_TRUE(cursor.on_instruction_begin("backward").has_value());
  auto extra = cursor.on_instruction_begin("forward");
  ASSERT_FALSE(extra.has_value());
  EXPECT_EQ(extra.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(extra.error().message.find("fewer frequencies than expected"), std::string::npos);
  EXPECT_NE(extra.error().message.find("rank 3"), std::string::npos) << extra.error().message;
  EXPECT_NE(extra.error().message.find("instruction 3"), std::string::npos);
  EXPECT_EQ(cursor.position(), 2u);
}

TEST(ScheduleCursorTest, AnotherNameNamesBothAndConsumesNothing) {
  ScheduleCursor cursor(two_instructions());
  auto wrong = cursor.on_instruction_begin("backward");
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(wrong.error().message.find("expects 'forward'"), std::string::npos)
      << wrong.error().message;
  EXPECT_NE(wrong.error().message.find("'backward' began"), std::string::npos);
  EXPECT_EQ(cursor.position(), 0u);
  EXPECT_EQ(cursor.on_instruction_begin("forward").value(), 1410);
}

TEST(ScheduleCursorTest, AnIterationEndingEarlyIsMoreFrequenciesThanExpectedAndRewinds) {
  ScheduleCursor cursor(two_instructions());
  ASSERT_TRUE(cursor.on_instruction_begin("forward").has_value());
  auto early = cursor.on_step_end();
  ASSERT_FALSE(early.has_value());
  EXPECT_NE(early.error().message.find("more frequencies than expected"), std::string::npos);
  EXPECT_NE(early.error().message.find("after 1 of its 2"), std::string::npos)
      << early.error().message;
  EXPECT_NE(early.error().message.find("('backward', 0 MHz)"), std::string::npos);
  EXPECT_EQ(cursor.position(), 0u);
  EXPECT_EQ(cursor.on_instruction_begin("forward").value(), 1410);
}

TEST(ScheduleCursorTest, AnEmptyScheduleAllowsEmptyIterationsOnly) {
  ScheduleCursor cursor(FrequencySchedule{0, {}});
  EXPECT_TRUE(cursor.on_step_end().has_value());
  EXPECT_FALSE(cursor.on_instruction_begin("forward").has_value());
}

TEST(ScheduleCursorTest, ResetTakesANewScheduleFromTheTop) {
  ScheduleCursor cursor(two_instructions());
  ASSERT_TRUE(cursor.on_instruction_begin("forward").has_value());
  cursor.reset({3, {{"forward", 900}}});
  EXPECT_EQ(cursor.position(), 0u);
  EXPECT_EQ(cursor.on_instruction_begin("forward").value(), 900);
  EXPECT_TRUE(cursor.on_step_end().has_value());
}

}  // namespace
}  // namespace zeus::pfo
