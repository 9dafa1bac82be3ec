#include "common/run_command.h"

#include <gtest/gtest.h>

#include <chrono>

namespace zeus {
namespace {

using std::chrono::milliseconds;

TEST(RunCommandTest, CollectsOutputAndExitStatus) {
  auto outcome = run_command({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(outcome);
  EXPECT_TRUE(outcome->started);
  EXPECT_FALSE(outcome->succeeded());
  EXPECT_EQ(outcome->exit_code, 3);
  EXPECT_EQ(outcome->stdout_text, "out\n");
  EXPECT_EQ(outcome->stderr_text, "err\n");
  EXPECT_EQ(outcome->describe(milliseconds(1000)), "exited with code 3");
}

TEST(RunCommandTest, RunsWithoutAShell) {
  auto outcome = run_command({"echo", "$HOME", "a;b", "*"});
  ASSERT_TRUE(outcome);
  EXPECT_TRUE(outcome->succeeded());
  EXPECT_EQ(outcome->stdout_text, "$HOME a;b *\n");
}

TEST(RunCommandTest, KillsWhatOutlivesItsLimit) {
  RunCommandOptions options;
  options.timeout = milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  // The child's own child holds the pipes too: the whole group is killed.
  auto outcome = run_command({"sh", "-c", "sleep 30 & sleep 30"}, options);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(outcome);
  EXPECT_TRUE(outcome->timed_out);
  EXPECT_FALSE(outcome->succeeded());
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_NE(outcome->describe(options.timeout).find("timed out after 0.2"), std::string::npos)
      << outcome->describe(options.timeout);
}

TEST(RunCommandTest, DoesNotWaitForwardOnAPipeALeftoverChildHolds) {
  RunCommandOptions options;
  options.output_grace = milliseconds(100);
  // The shell ends at once; its background child keeps stdout open for 5 s (setsid: not killed
  // with the group, as a sudo child would not be).
  auto outcome = run_command({"sh", "-c", "echo started; setsid sleep 5 &"}, options);
  ASSERT_TRUE(outcome);
  EXPECT_TRUE(outcome->succeeded());
  EXPECT_FALSE(outcome->output_complete);
  EXPECT_EQ(outcome->stdout_text, "started\n");
}

TEST(RunCommandTest, AProgramThatDoesNotExistIsAnOutcome) {
  auto outcome = run_command({"/nonexistent/zeus-no-such-program"});
  ASSERT_TRUE(outcome);
  EXPECT_FALSE(outcome->started);
  EXPECT_NE(outcome->describe(milliseconds(1)).find("could not be started"), std::string::npos);
  EXPECT_FALSE(run_command({}));
}

TEST(RunCommandTest, CapsWhatItKeeps) {
  RunCommandOptions options;
  options.max_output_bytes = 1000;
  auto outcome = run_command({"sh", "-c", "head -c 100000 /dev/zero"}, options);
  ASSERT_TRUE(outcome);
  EXPECT_TRUE(outcome->succeeded());  // it was read to its end, not blocked on a full pipe
  EXPECT_EQ(outcome->stdout_text.size(), 1000u);
}

}  // namespace
}  // namespace zeus
