#include "zeusd/process_identity.h"

#include <unistd.h>

#include <gtest/gtest.h>

namespace zeus::zeusd {
namespace {

TEST(ProcessIdentity, StartTimeOfALiveProcessIsReadAndStable) {
  const auto first = process_start_ticks(getpid());
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(process_start_ticks(getpid()), first);
  EXPECT_EQ(process_start_ticks(0), std::nullopt);
  EXPECT_EQ(process_start_ticks(-3), std::nullopt);
  EXPECT_EQ(process_start_ticks(getpid(), "/nonexistent/proc"), std::nullopt);
}

TEST(ProcessIdentity, CommandNamesWithSpacesAndParenthesesDoNotShiftTheFields) {
  const std::string tail = " S 1 1 1 0 -1 4194304 103 0 0 0 0 0 0 0 20 0 1 0 239855 3133440 412";
  EXPECT_EQ(parse_stat_start_ticks("12697 (cat)" + tail), 239855u);
  EXPECT_EQ(parse_stat_start_ticks("12697 (a) b ) (c)" + tail), 239855u);
  EXPECT_EQ(parse_stat_start_ticks("12697 (cat) S 1 2"), std::nullopt);
  EXPECT_EQ(parse_stat_start_ticks("garbage"), std::nullopt);
  EXPECT_EQ(parse_stat_start_ticks("1 (x) S 1 1 1 0 -1 4 1 0 0 0 0 0 0 0 20 0 1 0 12x 3"),
            std::nullopt);
}

TEST(ProcessIdentity, BootIdIsKnownOnLinux) {
  EXPECT_FALSE(current_boot_id().empty());
  EXPECT_EQ(current_boot_id("/nonexistent/proc"), "");
}

}  // namespace
}  // namespace zeus::zeusd
