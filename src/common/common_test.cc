#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/csv_table.h"
#include "common/dynamic_library.h"
#include "common/median.h"
#include "common/sysfs.h"
#include "zeus/common/clock.h"
#include "zeus/common/log.h"
#include "zeus/common/result.h"

namespace zeus {
namespace {

TEST(ResultTest, ErrorToStringNamesCode) {
  Error e{ErrorCode::kPermissionDenied, "setting a power limit needs root"};
  EXPECT_EQ(e.to_string(), "permission denied: setting a power limit needs root");
}

Result<int> half(int x) {
  if (x % 2 != 0) return fail(ErrorCode::kInvalidArgument, "odd");
  return x / 2;
}

Result<int> quarter(int x) {
  auto h = half(x);
  if (!h) return fail(h.error());
  return half(*h);
}

Result<void> check_even(int x) {
  ZEUS_TRY(half(x));
  return ok();
}

TEST(ResultTest, PropagatesErrors) {
  EXPECT_EQ(*quarter(8), 2);
  EXPECT_EQ(quarter(6).error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(check_even(4).has_value());
  EXPECT_FALSE(check_even(3).has_value());
}

TEST(ClockTest, FakeClockMovesOnlyForward) {
  FakeClock clock(10.0);
  EXPECT_DOUBLE_EQ(clock.now_s(), 10.0);
  clock.advance_s(2.5);
  EXPECT_DOUBLE_EQ(clock.now_s(), 12.5);
  clock.sleep_until_s(20.0);
  EXPECT_DOUBLE_EQ(clock.now_s(), 20.0);
  clock.set_s(5.0);
  EXPECT_DOUBLE_EQ(clock.now_s(), 20.0);
  clock.sleep_for_s(1.0);
  EXPECT_DOUBLE_EQ(clock.now_s(), 21.0);
}

TEST(ClockTest, SystemClockIsMonotone) {
  SystemClock clock;
  double a = clock.now_s();
  clock.sleep_for_s(0.01);
  double b = clock.now_s();
  EXPECT_GE(b - a, 0.009);
  EXPECT_GT(clock.unix_time_s(), 1.6e9);
}

TEST(LogTest, SinkReceivesMessagesAtOrAboveLevel) {
  std::vector<std::string> seen;
  set_log_sink([&](LogLevel, std::string_view m) { seen.emplace_back(m); });
  LogLevel before = log_level();
  set_log_level(LogLevel::kWarning);
  log_info("dropped");
  log_warning("kept");
  set_log_level(before);
  set_log_sink(nullptr);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], "kept");
  LogLevel parsed;
  EXPECT_TRUE(parse_log_level("debug", &parsed));
  EXPECT_EQ(parsed, LogLevel::kDebug);
  EXPECT_FALSE(parse_log_level("loud", &parsed));
}

// A message naming its component is printed with that component
// before the level, not after "zeus <level>:".
TEST(LogTest, Logs_TheComponentPrefixIsNotRepeated) {
  LogLevel before = log_level();
  set_log_level(LogLevel::kInfo);
  ::testing::internal::CaptureStderr();
  log_info("zeusd: GPU 0 power limit set");
  log_warning("zeus proxy: the upstream broke off");
  log_warning("zeus: power stream of node1 ended");
  log_error("no component: here");
  const std::string printed = ::testing::internal::GetCapturedStderr();
  set_log_level(before);
  EXPECT_EQ(printed,
            "zeusd info: GPU 0 power limit set\n"
            "zeus proxy warning: the upstream broke off\n"
            "zeus warning: power stream of node1 ended\n"
            "zeus error: no component: here\n");
}

TEST(DynamicLibraryTest, MissingLibraryIsUnavailable) {
  auto lib = DynamicLibrary::open("/nonexistent/libnothing.so");
  ASSERT_FALSE(lib.has_value());
  EXPECT_EQ(lib.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(lib.error().message.find("libnothing.so"), std::string::npos);
}

TEST(DynamicLibraryTest, FindsSymbolsAndReportsMissingOnes) {
  auto lib = DynamicLibrary::open("libc.so.6");
  ASSERT_TRUE(lib.has_value()) << lib.error().to_string();
  auto strlen_fn = lib->symbol<size_t (*)(const char*)>("strlen");
  ASSERT_TRUE(strlen_fn.has_value());
  EXPECT_EQ((*strlen_fn)("abc"), 3u);
  auto missing = lib->raw_symbol("zeus_no_such_function");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotSupported);
}

TEST(MedianTest, MiddleValueMeanOfTheMiddleTwoOrZeroWhenEmpty) {
  EXPECT_DOUBLE_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(median({4.0, 1.0, 2.0, 3.0}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0.0);
}

TEST(SysfsTest, ReadsIntegersAndMapsErrors) {
  auto dir = std::filesystem::temp_directory_path() / "zeus_sysfs_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "energy_uj") << "123456\n";
  std::ofstream(dir / "bad") << "12ab\n";
  EXPECT_EQ(*read_uint64_file((dir / "energy_uj").string()), 123456u);
  EXPECT_EQ(read_uint64_file((dir / "bad").string()).error().code, ErrorCode::kInternal);
  EXPECT_EQ(read_uint64_file((dir / "missing").string()).error().code, ErrorCode::kNotFound);
  auto names = list_directory(dir.string());
  ASSERT_TRUE(names.has_value());
  EXPECT_EQ(names->size(), 2u);
  std::filesystem::remove_all(dir);
}

// A UTF-8 byte-order mark (Excel's "CSV UTF-8") before the header is not part
// of the first column's name.
TEST(CsvTableTest, CarbonCsv_AByteOrderMarkIsSkipped) {
  auto table = CsvTable::parse("\xEF\xBB\xBFtimestamp,value\n2024-01-01T00:00:00Z,400\n", "bom.csv");
  ASSERT_TRUE(table) << table.error().message;
  auto columns = table->require_columns({"timestamp", "value"});
  ASSERT_TRUE(columns) << columns.error().message;
  EXPECT_EQ(table->cell(0, (*columns)[1]), "400");
}

}  // namespace
}  // namespace zeus
