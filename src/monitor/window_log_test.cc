#include "monitor/window_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace zeus {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "zeus_window_log_" + std::to_string(::getpid()) + "_" + name;
}

TEST(WindowLogTest, FormatsFloatsLikePythonRepr) {
  EXPECT_EQ(format_python_float(2924.4619999974966), "2924.4619999974966");
  EXPECT_EQ(format_python_float(13588420.801224232), "13588420.801224232");
  EXPECT_EQ(format_python_float(4436.375), "4436.375");
  EXPECT_EQ(format_python_float(12.0), "12.0");
  EXPECT_EQ(format_python_float(0.0), "0.0");
  EXPECT_EQ(format_python_float(0.1), "0.1");
  EXPECT_EQ(format_python_float(-3.5), "-3.5");
  EXPECT_EQ(format_python_float(1.5e-5), "1.5e-05");
  EXPECT_EQ(format_python_float(1e16), "1e+16");
  EXPECT_EQ(format_python_float(1e15), "1000000000000000.0");
  // Shortest round trip.
  const double value = 0.1 + 0.2;
  EXPECT_EQ(std::strtod(format_python_float(value).c_str(), nullptr), value);
  EXPECT_EQ(format_python_float(value), "0.30000000000000004");
}

TEST(WindowLogTest, QuotesCsvFieldsOnlyWhenNeeded) {
  EXPECT_EQ(csv_field("__GlobalPowerLimitOptimizer_300"), "__GlobalPowerLimitOptimizer_300");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
}

TEST(WindowLogTest, WritesHeaderAndRows) {
  const std::string path = temp_path("rows.csv");
  {
    auto log = WindowLog::create(path, {0, 1}, {0}, {0});
    ASSERT_TRUE(log.has_value()) << log.error().to_string();
    Measurement m;
    m.time_s = 10.5;
    m.gpu_energy_j = {{0, 2924.25}, {1, 100.0}};
    m.cpu_energy_j = {{0, 55.5}};
    m.dram_energy_j = {{0, 7.0}};
    ASSERT_TRUE((*log)->append(1700000000.25, "epoch,1", m).has_value());
    m.gpu_energy_j.erase(1);
    ASSERT_TRUE((*log)->append(1700000011.0, "step", m).has_value());
    // Flushed after every row: readable while the log is open.
    EXPECT_NE(read_file(path).find("step"), std::string::npos);
  }
  EXPECT_EQ(read_file(path),
            "start_time,window_name,elapsed_time,gpu0_energy,gpu1_energy,cpu0_energy,dram0_energy\n"
            "1700000000.25,\"epoch,1\",10.5,2924.25,100.0,55.5,7.0\n"
            "1700000011.0,step,10.5,2924.25,,55.5,7.0\n");
  // Creating it again starts a fresh file.
  ASSERT_TRUE(WindowLog::create(path, {0}, {}, {}).has_value());
  EXPECT_EQ(read_file(path), "start_time,window_name,elapsed_time,gpu0_energy\n");
  std::filesystem::remove(path);
}

TEST(WindowLogTest, UnwritablePathIsAnError) {
  auto log = WindowLog::create("/nonexistent-folder/zeus/log.csv", {0}, {}, {});
  ASSERT_FALSE(log.has_value());
  EXPECT_EQ(log.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(log.error().message.find("/nonexistent-folder/zeus/log.csv"), std::string::npos);
}

}  // namespace
}  // namespace zeus

namespace zeus {
namespace {

// `zeus measure --log FILE` appends, and never clobbers an unrelated file.
TEST(WindowLogTest, AppendKeepsEarlierRowsAndRefusesForeignFiles) {
  const std::string path = temp_path("append.csv");
  std::filesystem::remove(path);
  Measurement m;
  m.time_s = 1.0;
  m.gpu_energy_j = {{0, 5.0}};
  for (int run = 0; run < 3; ++run) {
    auto log = WindowLog::create(path, {0}, {}, {}, /*append=*/true);
    ASSERT_TRUE(log.has_value()) << log.error().to_string();
    ASSERT_TRUE((*log)->append(100.0 + run, "measure", m).has_value());
  }
  EXPECT_EQ(read_file(path),
            "start_time,window_name,elapsed_time,gpu0_energy\n"
            "100.0,measure,1.0,5.0\n101.0,measure,1.0,5.0\n102.0,measure,1.0,5.0\n");
  // Other columns (another GPU set): refused, file unchanged.
  auto other = WindowLog::create(path, {0, 1}, {}, {}, true);
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(other.error().message.find("left untouched"), std::string::npos);
  EXPECT_NE(read_file(path).find("102.0"), std::string::npos);
  // An unrelated file: refused, contents kept.
  const std::string precious = temp_path("precious.csv");
  { std::ofstream(precious) << "my,important,data\n1,2,3\n"; }
  EXPECT_FALSE(WindowLog::create(precious, {0}, {}, {}, true).has_value());
  EXPECT_EQ(read_file(precious), "my,important,data\n1,2,3\n");
  // An empty file gets the header.
  { std::ofstream(precious, std::ios::trunc); }
  ASSERT_TRUE(WindowLog::create(precious, {0}, {}, {}, true).has_value());
  EXPECT_EQ(read_file(precious), "start_time,window_name,elapsed_time,gpu0_energy\n");
  std::filesystem::remove(path);
  std::filesystem::remove(precious);
}

}  // namespace
}  // namespace zeus
