// Replays the 12 real JIT-profiler logs and checks each selection against formulas computed
// here, independently of the library's parser and selectors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "zeus/optimizer/power_limit_selector.h"
#include "zeus/optimizer/power_profile.h"

namespace zeus {
namespace {

namespace fs = std::filesystem;

struct Row {
  int limit_w;
  double energy_j;
  double time_s;
};

// Independent reading: limit = digits after the last '_', energy = sum of columns 3.., time =
// column 2.
std::vector<Row> read_rows(const fs::path& path, int* gpu_count) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  *gpu_count = static_cast<int>(std::count(line.begin(), line.end(), ',')) - 2;
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    std::stringstream s(line);
    std::string start, name, elapsed, energy;
    std::getline(s, start, ',');
    std::getline(s, name, ',');
    std::getline(s, elapsed, ',');
    Row row{std::stoi(name.substr(name.rfind('_') + 1)), 0.0, std::stod(elapsed)};
    while (std::getline(s, energy, ',')) row.energy_j += std::stod(energy);
    rows.push_back(row);
  }
  return rows;
}

template <typename Cost>
int argmin(const std::vector<Row>& rows, Cost cost) {
  int best = rows[0].limit_w;
  double best_cost = cost(rows[0]);
  for (const Row& r : rows) {
    if (cost(r) < best_cost) best = r.limit_w, best_cost = cost(r);
  }
  return best;
}

std::vector<fs::path> real_logs() {
  std::vector<fs::path> logs;
  for (const auto& e : fs::directory_iterator(fs::path(ZEUS_TEST_DATA_DIR) / "profile_logs")) {
    if (e.path().extension() == ".csv") logs.push_back(e.path());
  }
  std::sort(logs.begin(), logs.end());
  return logs;
}

TEST(MonitorLogProfileTest, ReplaysTheTwelveRealLogs) {
  const auto logs = real_logs();
  ASSERT_EQ(logs.size(), 12u);
  for (const fs::path& log : logs) {
    SCOPED_TRACE(log.filename().string());
    int gpu_count = 0;
    const std::vector<Row> rows = read_rows(log, &gpu_count);
    auto profile = power_profile_from_monitor_log(log.string());
    ASSERT_TRUE(profile.has_value()) << profile.error().to_string();
    ASSERT_EQ(profile->measurements.size(), rows.size());
    EXPECT_EQ(profile->gpu_count, static_cast<uint32_t>(gpu_count));
    EXPECT_EQ(gpu_count, log.filename().string().find("0,1,2,3") != std::string::npos ? 4
                         : log.filename().string().find("0,1") != std::string::npos ? 2
                                                                                      : 1);
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(profile->measurements[i].setting, static_cast<uint32_t>(rows[i].limit_w));
      EXPECT_NEAR(profile->measurements[i].energy_j, rows[i].energy_j, 1e-6);
      EXPECT_EQ(profile->measurements[i].time_s, rows[i].time_s);
    }
    const auto& m = profile->measurements;
    const double max_power_w = profile_max_power_w(*profile);
    const int max_limit_w = rows[0].limit_w;  // the logs profile from the maximum downward
    EXPECT_EQ(max_power_w, static_cast<double>(max_limit_w * gpu_count));

    EXPECT_EQ(*PowerLimitSelector::min_energy().select(m, max_power_w),
              static_cast<uint32_t>(argmin(rows, [](const Row& r) { return r.energy_j; })));
    EXPECT_EQ(*PowerLimitSelector::min_time().select(m, max_power_w),
              static_cast<uint32_t>(argmin(rows, [](const Row& r) { return r.time_s; })));
    for (double eta : {0.0, 0.25, 0.5, 0.75, 1.0}) {
      const int expected = argmin(rows, [&](const Row& r) {
        return eta * r.energy_j + (1 - eta) * max_limit_w * gpu_count * r.time_s;
      });
      EXPECT_EQ(*PowerLimitSelector::zeus_cost(eta)->select(m, max_power_w),
                static_cast<uint32_t>(expected))
          << "eta " << eta;
    }
    for (double factor : {1.0, 1.05, 1.1, 1.2, 1.5}) {
      int expected = max_limit_w;
      for (const Row& r : rows) {
        if (r.time_s <= factor * rows[0].time_s && r.limit_w < expected) expected = r.limit_w;
      }
      EXPECT_EQ(*PowerLimitSelector::max_slowdown(factor)->select(m, max_power_w),
                static_cast<uint32_t>(expected))
          << "factor " << factor;
    }
  }
}

TEST(MonitorLogProfileTest, KnownAnswerForOneLog) {
  // V100 resnet50, one GPU: energy is lowest at 150 W (4830.3 J), time at 250 W.
  auto p = power_profile_from_monitor_log(std::string(ZEUS_TEST_DATA_DIR) +
                                          "/profile_logs/V100+resnet50+gpu0.csv");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(*PowerLimitSelector::min_energy().select(p->measurements, 250), 150u);
  EXPECT_EQ(*PowerLimitSelector::min_time().select(p->measurements, 250), 250u);
}

class MalformedLogTest : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    path_ = fs::temp_directory_path() / ("zeus_log_test_" + std::to_string(::getpid()) + ".csv");
    std::ofstream(path_) << text;
    return path_.string();
  }
  void TearDown() override { fs::remove(path_); }
  fs::path path_;
};

TEST_F(MalformedLogTest, OneClearErrorNamingFileAndLine) {
  const char* header = "start_time,window_name,elapsed_time,gpu0_energy\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "line 1"},
      {"a,b,c\n", "line 1"},
      {"start_time,window_name,elapsed_time,cpu0_energy\n", "gpu<i>_energy"},
      {std::string(header) + "1,__PowerLimitOptimizer_300,2.0\n", "line 2"},
      {std::string(header) + "1,__PowerLimitOptimizer_300,abc,5\n", "elapsed_time"},
      {std::string(header) + "1,__PowerLimitOptimizer_300,2,-5\n", "gpu0_energy"},
      {std::string(header) + "1,epoch,2,5\n", "no row"},
  };
  for (const auto& [text, needle] : cases) {
    const std::string path = write(text);
    auto p = power_profile_from_monitor_log(path);
    ASSERT_FALSE(p.has_value()) << text;
    EXPECT_EQ(p.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(p.error().message.find(needle), std::string::npos) << p.error().message;
    EXPECT_NE(p.error().message.find(path), std::string::npos);
  }
  EXPECT_EQ(power_profile_from_monitor_log("/nonexistent/zeus.csv").error().code,
            ErrorCode::kNotFound);
}

TEST_F(MalformedLogTest, OtherWindowsAreSkippedAndTheLastRowOfASettingWins) {
  const std::string path = write(
      "start_time,window_name,elapsed_time,gpu0_energy,gpu1_energy\r\n"
      "1,epoch,100,5,5\r\n"
      "2,__PowerLimitOptimizer_300,2,10,20\r\n"
      "3,__PowerLimitOptimizer_275,3,1,1\r\n"
      "4,__PowerLimitOptimizer_275,4,7,8\r\n");
  auto p = power_profile_from_monitor_log(path);
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  EXPECT_EQ(p->gpu_count, 2u);
  EXPECT_EQ(p->measurements,
            (std::vector<KnobMeasurement>{{300, 30.0, 2.0}, {275, 15.0, 4.0}}));
}

}  // namespace
}  // namespace zeus
