#include "zeus/optimizer/power_profile.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace zeus {
namespace {

namespace fs = std::filesystem;

class PowerProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("zeus_profile_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  fs::path dir_;
};

PowerProfile sample_profile() {
  PowerProfile p;
  p.gpu_model = "NVIDIA A40";
  p.gpu_count = 2;
  p.measurements = {{300, 2924.5, 10.25}, {275, 2758.125, 10.5}};
  return p;
}

TEST_F(PowerProfileTest, SaveThenLoadRoundTrips) {
  const std::string path = (dir_ / "sub" / "profile.json").string();
  ASSERT_TRUE(save_power_profile(path, sample_profile()).has_value());
  auto loaded = load_power_profile(path);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().to_string();
  EXPECT_EQ(loaded->knob, OptimizerKnob::kPowerLimit);
  EXPECT_EQ(loaded->gpu_model, "NVIDIA A40");
  EXPECT_EQ(loaded->gpu_count, 2u);
  EXPECT_EQ(loaded->measurements, sample_profile().measurements);
  EXPECT_EQ(profile_max_power_w(*loaded), 600.0);
  // No temporary file is left beside it.
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir_ / "sub")) files += entry.is_regular_file();
  EXPECT_EQ(files, 1u);
}

TEST_F(PowerProfileTest, ReadsTheOriginalZeusFormat) {
  auto p = power_profile_from_json(
      R"({"measurements": [{"power_limit": 250, "energy": 100.5, "time": 2.0},
                           {"power_limit": 225, "energy": 90, "time": 2.5}]})");
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  EXPECT_EQ(p->knob, OptimizerKnob::kPowerLimit);
  EXPECT_TRUE(p->gpu_model.empty());
  ASSERT_EQ(p->measurements.size(), 2u);
  EXPECT_EQ(p->measurements[1], (KnobMeasurement{225, 90.0, 2.5}));
  EXPECT_EQ(profile_max_power_w(*p), 250.0);
}

TEST_F(PowerProfileTest, SmClockProfilesUseTheirOwnKey) {
  PowerProfile p;
  p.knob = OptimizerKnob::kSmClock;
  p.max_power_w = 700;
  p.measurements = {{1980, 10, 1}, {1500, 8, 1.2}};
  const std::string text = power_profile_to_json(p);
  EXPECT_NE(text.find("\"sm_clock\":1980"), std::string::npos);
  auto back = power_profile_from_json(text);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->knob, OptimizerKnob::kSmClock);
  EXPECT_EQ(back->measurements, p.measurements);
  EXPECT_EQ(profile_max_power_w(*back), 700.0);
}

TEST_F(PowerProfileTest, DamagedFilesAreRejectedWhole) {
  const char* damaged[] = {
      "",
      "{\"measurements\": [{\"power_limit\": 300, \"energy\": 1, \"time\": 1}",  // truncated
      "[1, 2]",
      "{}",
      "{\"measurements\": []}",
      "{\"measurements\": [{\"power_limit\": 300, \"energy\": 1, \"time\": 1}, 5]}",
      "{\"measurements\": [{\"power_limit\": \"300\", \"energy\": 1, \"time\": 1}]}",
      "{\"measurements\": [{\"power_limit\": 300.5, \"energy\": 1, \"time\": 1}]}",
      "{\"measurements\": [{\"power_limit\": -300, \"energy\": 1, \"time\": 1}]}",
      "{\"measurements\": [{\"power_limit\": 300, \"time\": 1}]}",
      "{\"measurements\": [{\"power_limit\": 300, \"energy\": 1, \"time\": 0}]}",
      ("{\"measurements\": [{\"power_limit\": 300, \"energy\": 1, \"time\": 1},"
       " {\"power_limit\": 300, \"energy\": 1, \"time\": 1}]}"),  // one text: a duplicate
      "{\"knob\": \"fan\", \"measurements\": [{\"power_limit\": 300, \"energy\": 1, \"time\": 1}]}",
  };
  for (const char* text : damaged) {
    const std::string path = write("damaged.json", text);
    auto p = load_power_profile(path);
    ASSERT_FALSE(p.has_value()) << text;
    EXPECT_EQ(p.error().code, ErrorCode::kInvalidArgument) << text;
    EXPECT_NE(p.error().message.find(path), std::string::npos) << p.error().message;
  }
}

TEST_F(PowerProfileTest, MissingFileIsNotFound) {
  auto p = load_power_profile((dir_ / "absent.json").string());
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().code, ErrorCode::kNotFound);
}

TEST_F(PowerProfileTest, ProfileForAnotherGpuModelOrKnobIsRejected) {
  const PowerProfile p = sample_profile();
  EXPECT_TRUE(check_profile_matches(p, OptimizerKnob::kPowerLimit, "NVIDIA A40", "f").has_value());
  auto other = check_profile_matches(p, OptimizerKnob::kPowerLimit, "Tesla V100-SXM2-32GB", "f");
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(other.error().message.find("NVIDIA A40"), std::string::npos);
  EXPECT_NE(other.error().message.find("Tesla V100"), std::string::npos);
  EXPECT_FALSE(check_profile_matches(p, OptimizerKnob::kSmClock, "NVIDIA A40", "f").has_value());
  PowerProfile anonymous = p;
  anonymous.gpu_model.clear();
  EXPECT_TRUE(check_profile_matches(anonymous, OptimizerKnob::kPowerLimit, "Any GPU", "f"));
}

}  // namespace
}  // namespace zeus
