#include "zeusd/command_overrides.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "zeus/common/clock.h"
#include "zeus/device/replay_gpu.h"
#include "zeusd/override_gpu.h"

namespace zeus::zeusd {
namespace {

namespace fs = std::filesystem;

OverrideValues limit_values(uint32_t mw) {
  OverrideValues values(0);
  values.power_limit_mw = mw;
  return values;
}

// A temp folder with a recorder script that appends its arguments to calls.log.
class CommandOverridesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("zeus_overrides_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    recorder_ = (dir_ / "record.sh").string();
    std::ofstream(recorder_) << "#!/bin/sh\necho \"$@\" >> " << (dir_ / "calls.log").string()
                             << "\necho \"${ZEUS_TEST_SAY:-ok}\"\n";
    fs::permissions(recorder_, fs::perms::owner_all);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string calls() const {
    std::ifstream in(dir_ / "calls.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  CommandOverrides parse(const std::string& text) {
    auto parsed = CommandOverrides::parse(text, "overrides.toml");
    EXPECT_TRUE(parsed) << parsed.error().message;
    return parsed ? std::move(*parsed) : CommandOverrides{};
  }

  fs::path dir_;
  std::string recorder_;
};

TEST_F(CommandOverridesTest, SplitsLikeAShellButRunsNone) {
  auto words = split_command("sudo '/opt/my tools/cap.sh' -value {power_limit_w} \"-gpu\" {gpu_id}");
  ASSERT_TRUE(words) << words.error().message;
  EXPECT_EQ(*words, (std::vector<std::string>{"sudo", "/opt/my tools/cap.sh", "-value",
                                               "{power_limit_w}", "-gpu", "{gpu_id}"}));
  for (const char* refused : {"echo $HOME", "echo `id`", "ls *", "cap.sh | tee log",
                              "cap.sh > /tmp/x", "a; b", "echo 'unclosed", "~/cap.sh", ""}) {
    EXPECT_FALSE(split_command(refused)) << refused;
  }
  EXPECT_NE(split_command("cap.sh | tee").error().message.find("wrapper script"), std::string::npos);
}

TEST_F(CommandOverridesTest, ValidatesTheFileStrictly) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c : {
           Case{"[set_power_limit]\ncommands = []\n", "non-empty"},
           Case{"[set_power_limit]\nerror_pattern = \"x\"\n", "has no commands"},
           Case{"[set_power_limit]\ncommands = [\"a {min_clock_mhz}\"]\n", "unknown placeholder"},
           Case{"[reset_locked_clocks]\ncommands = [\"a {power_limit_w}\"]\n", "{gpu_id}"},
           Case{"[set_power_limit]\ncommands = [\"a {gpu_id\"]\n", "unfinished placeholder"},
           Case{"[set_power_limit]\ncommands = [\"a gpu}\"]\n", "without its"},
           Case{"[set_power_limit]\ncommands = [\"a\"]\ntimeout_s = 0\n", "timeout_s"},
           Case{"[set_power_limit]\ncommands = [\"a\"]\nerror_pattern = \"(\"\n", "regular expression"},
           Case{"[set_power_limit]\ncommands = [\"a\"]\nretries = 2\n", "unknown key 'retries'"},
           Case{"[set_clocks]\ncommands = [\"a\"]\n", "unknown operation [set_clocks]"},
           Case{"[set_power_limit\n", "line 1"},
       }) {
    auto parsed = CommandOverrides::parse(c.text, "overrides.toml");
    ASSERT_FALSE(parsed) << c.text;
    EXPECT_NE(parsed.error().message.find(c.says), std::string::npos)
        << c.text << " -> " << parsed.error().message;
    EXPECT_NE(parsed.error().message.find("overrides.toml"), std::string::npos);
  }
}

TEST_F(CommandOverridesTest, RunsEveryOperationWithItsPlaceholders) {
  const std::string r = recorder_;
  const CommandOverrides overrides = parse(
      "[set_power_limit]\ncommands = [\"" + r + " limit {power_limit_w} W {power_limit_mw} mW gpu {gpu_id}\"]\n"
      "[set_persistence_mode]\ncommands = [\"" + r + " persistence {enabled} gpu {gpu_id}\"]\n"
      "[set_gpu_locked_clocks]\ncommands = [\"" + r + " sm min 500\", \"" + r +
      " sm {min_clock_mhz}-{max_clock_mhz} gpu {gpu_id}\"]\n"
      "[reset_gpu_locked_clocks]\ncommands = [\"" + r + " sm reset {gpu_id}\"]\n"
      "[set_mem_locked_clocks]\ncommands = [\"" + r + " mem {min_clock_mhz}-{max_clock_mhz}\"]\n"
      "[reset_locked_clocks]\ncommands = [\"" + r + " reset all\"]\n");
  EXPECT_EQ(overrides.operation_names(),
            (std::vector<std::string>{"set_persistence_mode", "set_power_limit",
                                      "set_gpu_locked_clocks", "reset_gpu_locked_clocks",
                                      "set_mem_locked_clocks", "reset_locked_clocks"}));
  FakeClock clock;
  ReplayGpuConfig config;
  config.power_model = [](double, uint32_t, uint32_t) { return 100.0; };
  OverrideGpu gpu(std::make_unique<ReplayGpu>(clock, config), 3,
                  std::make_shared<const CommandOverrides>(overrides));
  ASSERT_TRUE(gpu.set_power_limit_mw(250'500));
  ASSERT_TRUE(gpu.reset_power_limit());  // the default, through set_power_limit's command
  ASSERT_TRUE(gpu.set_persistence_mode(true));
  ASSERT_TRUE(gpu.lock_sm_clocks_mhz(1000, 1410));
  ASSERT_TRUE(gpu.reset_sm_clocks());
  ASSERT_TRUE(gpu.lock_memory_clocks_mhz(1215, 1215));
  ASSERT_TRUE(gpu.reset_memory_clocks());  // no reset_mem_locked_clocks: reset_locked_clocks
  EXPECT_EQ(calls(),
            "limit 250 W 250500 mW gpu 3\n"
            "limit 300 W 300000 mW gpu 3\n"
            "persistence 1 gpu 3\n"
            "sm min 500\n"
            "sm 1000-1410 gpu 3\n"
            "sm reset 3\n"
            "mem 1215-1215\n"
            "reset all\n");
  // The driver was not touched; reads still come from it.
  EXPECT_EQ(*gpu.power_limit_mw(), 300'000u);
  EXPECT_EQ(*gpu.instant_power_mw(), 100'000u);
}

TEST_F(CommandOverridesTest, WithoutAnOverrideTheDriverIsUsed) {
  const CommandOverrides overrides =
      parse("[set_gpu_locked_clocks]\ncommands = [\"" + recorder_ + " sm\"]\n");
  FakeClock clock;
  ReplayGpuConfig config;
  config.power_model = [](double, uint32_t, uint32_t) { return 100.0; };
  OverrideGpu gpu(std::make_unique<ReplayGpu>(clock, config), 0,
                  std::make_shared<const CommandOverrides>(overrides));
  ASSERT_TRUE(gpu.set_power_limit_mw(200'000));
  EXPECT_EQ(*gpu.power_limit_mw(), 200'000u);
  EXPECT_EQ(calls(), "");
}

TEST_F(CommandOverridesTest, FailuresNameTheCommandAndStopTheSequence) {
  const std::string r = recorder_;
  // A non-zero exit stops the rest.
  auto overrides = parse("[set_power_limit]\ncommands = [\"sh -c 'echo nope >&2; exit 4'\", \"" +
                         r + " never\"]\n");
  auto failed = overrides.run(GpuOperation::kSetPowerLimit, limit_values(200'000));
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("exited with code 4"), std::string::npos)
      << failed.error().message;
  EXPECT_NE(failed.error().message.find("stderr: nope"), std::string::npos);
  EXPECT_EQ(calls(), "");

  // A zero exit whose output matches error_pattern ((?i): upstream's case-insensitive flag).
  setenv("ZEUS_TEST_SAY", "ERROR: not permitted", 1);
  overrides = parse("[set_power_limit]\ncommands = [\"" + r +
                    " {power_limit_w}\"]\nerror_pattern = \"(?i)error|fail\"\n");
  failed = overrides.run(GpuOperation::kSetPowerLimit, limit_values(200'000));
  unsetenv("ZEUS_TEST_SAY");
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("matched error_pattern '(?i)error|fail'"),
            std::string::npos)
      << failed.error().message;
  EXPECT_TRUE(overrides.run(GpuOperation::kSetPowerLimit, limit_values(200'000)));

  // A timeout.
  overrides = parse("[reset_locked_clocks]\ncommands = [\"sleep 10\"]\ntimeout_s = 1\n");
  const auto start = std::chrono::steady_clock::now();
  failed = overrides.run(GpuOperation::kResetLockedClocks, OverrideValues{0});
  ASSERT_FALSE(failed);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(failed.error().message.find("timed out"), std::string::npos) << failed.error().message;
}

TEST_F(CommandOverridesTest, RefusesAFileOthersCouldHaveWritten) {
  const fs::path file = dir_ / "overrides.toml";
  std::ofstream(file) << "[set_power_limit]\ncommands = [\"" << recorder_ << "\"]\n";
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_TRUE(CommandOverrides::load(file.string()));
  chmod(file.c_str(), 0666);
  auto refused = CommandOverrides::load(file.string());
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("world-writable"), std::string::npos);
  EXPECT_NE(refused.error().message.find("chmod o-w"), std::string::npos);
  EXPECT_FALSE(CommandOverrides::load((dir_ / "missing.toml").string()));
}

// error_pattern is matched in linear time on the whole output (RE2), so the
// patterns that overflowed std::regex's stack or took tens of seconds on one long line (a leading
// `.*`, nested repetition) answer at once, both when they match and when they do not.
TEST_F(CommandOverridesTest, ZeusdOverride_PatternsOnLongOutputNeitherCrashNorStall) {
  // A wrapper that succeeds after one 60,000-byte line, then $ZEUS_TEST_TAIL.
  const fs::path script = dir_ / "longline.sh";
  std::ofstream(script) << "#!/bin/sh\nhead -c 60000 /dev/zero | tr '\\0' a\n"
                           "printf '%s' \"$ZEUS_TEST_TAIL\"\n";
  fs::permissions(script, fs::perms::owner_all);
  for (const char* pattern : {"(?i).*(error|fail)", "(.|\\n)*fail", "(a*)*b", "(?s).*x.*y.*z"}) {
    auto overrides = parse("[set_power_limit]\ncommands = [\"" + script.string() +
                           "\"]\nerror_pattern = '" + pattern + "'\n");
    for (const bool matches : {false, true}) {
      setenv("ZEUS_TEST_TAIL", matches ? " fail b xyz" : "", 1);
      const auto start = std::chrono::steady_clock::now();
      auto outcome = overrides.run(GpuOperation::kSetPowerLimit, limit_values(200'000));
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_LT(seconds, 2.0) << pattern;
      EXPECT_EQ(!outcome, matches) << pattern << ": "
                                   << (outcome ? "succeeded" : outcome.error().message);
    }
  }
  unsetenv("ZEUS_TEST_TAIL");
}

}  // namespace
}  // namespace zeus::zeusd
