#include "zeus/monitor/accounting_monitor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>

#include "zeus/device/replay_gpu.h"

namespace zeus {
namespace {

constexpr double kT0 = 1'666'245'600;  // 2022-10-20T06:00:00Z

// Three 30-minute intervals from kT0: 600, 300 and 100 gCO2eq/kWh.
std::shared_ptr<IntensitySeries> three_intervals() {
  auto series = IntensitySeries::create({{kT0, kT0 + 1800, 600},
                                         {kT0 + 1800, kT0 + 3600, 300},
                                         {kT0 + 3600, kT0 + 5400, 100}},
                                        "gCO2eq/kWh", "test series");
  EXPECT_TRUE(series) << series.error().message;
  return std::shared_ptr<IntensitySeries>(std::move(*series));
}

struct Rig {
  FakeClock clock{0.0, kT0};
  Devices devices;
  Rig(double watts) {
    ReplayGpuConfig config;
    config.power_model = ReplayGpu::capped_power_model(watts);
    devices.gpus.push_back(std::make_unique<ReplayGpu>(clock, config));
  }
  std::unique_ptr<AccountingMonitor> monitor(std::shared_ptr<IntensityProvider> provider) {
    AccountingMonitorOptions options;
    options.monitor.start_sampler_thread = false;
    options.start_boundary_thread = false;
    auto made = AccountingMonitor::create(devices, clock, std::move(provider), options);
    EXPECT_TRUE(made) << made.error().message;
    return std::move(*made);
  }
};

TEST(AccountingMonitorTest, AWindowOverThreeIntervalsIsChargedIntervalByInterval) {
  Rig rig(250);
  auto monitor = rig.monitor(three_intervals());
  rig.clock.set_s(900);  // 06:15
  ASSERT_TRUE(monitor->begin_window("train"));
  monitor->split_due_parts();  // nothing due yet
  rig.clock.set_s(1800);       // the boundary thread wakes at each boundary
  monitor->split_due_parts();
  rig.clock.set_s(3600);
  monitor->split_due_parts();
  rig.clock.set_s(4500);  // 07:15
  auto m = monitor->end_window("train");
  ASSERT_TRUE(m) << m.error().message;
  // By hand: 250 W x 900 s = 0.0625 kWh at 600 g, x 1800 s = 0.125 kWh at 300, x 900 s at 100.
  EXPECT_TRUE(m->complete);
  EXPECT_EQ(m->unit, "gCO2eq/kWh");
  EXPECT_NEAR(m->gpu.at(0), 37.5 + 37.5 + 6.25, 1e-9);
  EXPECT_NEAR(m->total(), 81.25, 1e-9);
  EXPECT_NEAR(m->energy.gpu_energy_j.at(0), 250.0 * 3600, 1e-6);
  ASSERT_EQ(m->parts.size(), 3u);
  EXPECT_EQ(*m->parts[0].value, 600);
  EXPECT_EQ(*m->parts[1].value, 300);
  EXPECT_EQ(*m->parts[2].value, 100);
  EXPECT_DOUBLE_EQ(m->parts[1].start_s, kT0 + 1800);
  EXPECT_DOUBLE_EQ(m->parts[2].end_s, kT0 + 4500);
}

TEST(AccountingMonitorTest, AGapLeavesTheWindowMeasuredAndItsAmountUnknown) {
  Rig rig(100);
  auto gappy = IntensitySeries::create({{kT0, kT0 + 1800, 500}, {kT0 + 3600, kT0 + 5400, 200}},
                                       "gCO2eq/kWh", "gappy series");
  ASSERT_TRUE(gappy);
  auto monitor = rig.monitor(std::shared_ptr<IntensitySeries>(std::move(*gappy)));
  ASSERT_TRUE(monitor->begin_window("w"));
  rig.clock.set_s(1800);
  monitor->split_due_parts();
  rig.clock.set_s(2000);  // inside the gap
  auto m = monitor->end_window("w");
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->complete);
  EXPECT_TRUE(m->gpu.empty());
  EXPECT_NE(m->unknown_reason.find("gappy series has no value"), std::string::npos)
      << m->unknown_reason;
  EXPECT_NEAR(m->energy.gpu_energy_j.at(0), 100.0 * 2000, 1e-6);  // still measured
}

// A CSV whose rows skip two hours in the middle (08:00-10:00), and a window from 06:30 to 10:30
// across them, split where the boundary thread would split it: the documented fallback
// (accounting_monitor.h, docs/python.md): the whole window is measured, its amounts are unknown
// with the reason naming the first hour without a row, and the parts on either side keep their
// values.
TEST(AccountingMonitorTest, ACsvWithMissingHoursInTheMiddleLeavesTheWindowMeasured) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("zeus_gappy_intensity_" + std::to_string(getpid()) + ".csv");
  std::ofstream(path) << "location,timestamp,duration,value\n"
                         "MISO,2022-10-20T06:00:00+00:00,60,500\n"
                         "MISO,2022-10-20T07:00:00+00:00,60,400\n"
                         "MISO,2022-10-20T10:00:00+00:00,60,200\n"
                         "MISO,2022-10-20T11:00:00+00:00,60,100\n";
  auto csv = load_intensity_csv(path.string(), "MISO");
  std::filesystem::remove(path);
  ASSERT_TRUE(csv) << csv.error().message;  // a gap is not a malformed file
  std::shared_ptr<IntensitySeries> series(std::move(*csv));
  EXPECT_EQ(series->value_at(kT0 + 2 * 3600 + 60).error().code, ErrorCode::kNotFound);
  // Inside the gap the next boundary is the next row's start: one part spans the gap.
  EXPECT_DOUBLE_EQ(series->next_boundary_after(kT0 + 2 * 3600), kT0 + 4 * 3600);

  Rig rig(250);
  auto monitor = rig.monitor(series);
  rig.clock.set_s(1800);  // 06:30
  ASSERT_TRUE(monitor->begin_window("across the gap"));
  for (double t : {3600.0, 7200.0, 4 * 3600.0}) {  // 07:00, 08:00, 10:00
    rig.clock.set_s(t);
    monitor->split_due_parts();
  }
  rig.clock.set_s(4.5 * 3600);  // 10:30
  auto m = monitor->end_window("across the gap");
  ASSERT_TRUE(m) << m.error().message;  // never an error for a missing rate
  EXPECT_NEAR(m->energy.gpu_energy_j.at(0), 250.0 * 4 * 3600, 1e-6);  // still measured
  EXPECT_DOUBLE_EQ(m->energy.time_s, 4 * 3600);
  EXPECT_FALSE(m->complete);
  EXPECT_TRUE(m->gpu.empty());  // no partial sum passed off as the window's carbon
  EXPECT_EQ(m->total(), 0);
  EXPECT_EQ(m->unit, "gCO2eq/kWh");
  EXPECT_NE(m->unknown_reason.find("has no value for 2022-10-20T08:00:00Z"), std::string::npos)
      << m->unknown_reason;
  EXPECT_NE(m->unknown_reason.find("(MISO)"), std::string::npos) << m->unknown_reason;
  ASSERT_EQ(m->parts.size(), 4u);
  EXPECT_EQ(m->parts[0].value.value_or(-1), 500);
  EXPECT_EQ(m->parts[1].value.value_or(-1), 400);
  EXPECT_FALSE(m->parts[2].value.has_value());  // 08:00-10:00, the gap
  EXPECT_DOUBLE_EQ(m->parts[2].start_s, kT0 + 2 * 3600);
  EXPECT_DOUBLE_EQ(m->parts[2].end_s, kT0 + 4 * 3600);
  EXPECT_EQ(m->parts[3].value.value_or(-1), 200);
  EXPECT_NEAR(m->parts[2].energy.gpu_energy_j.at(0), 250.0 * 2 * 3600, 1e-6);
}

TEST(AccountingMonitorTest, WindowsOverlapAndRefuseMisuse) {
  Rig rig(200);
  auto monitor = rig.monitor(three_intervals());
  ASSERT_TRUE(monitor->begin_window("a"));
  EXPECT_FALSE(monitor->begin_window("a"));
  rig.clock.set_s(1000);
  ASSERT_TRUE(monitor->begin_window("b"));
  rig.clock.set_s(2000);
  monitor->split_due_parts();  // (late: the part is charged at the value where it began)
  auto a = monitor->end_window("a");
  rig.clock.set_s(2600);
  auto b = monitor->end_window("b");
  ASSERT_TRUE(a && b);
  EXPECT_NEAR(a->gpu.at(0), 200.0 * 2000 / 3.6e6 * 600, 1e-9);
  EXPECT_NEAR(b->gpu.at(0), 200.0 * 1000 / 3.6e6 * 600 + 200.0 * 600 / 3.6e6 * 300, 1e-9);
  EXPECT_EQ(monitor->end_window("a").error().code, ErrorCode::kNotFound);
}

TEST(AccountingMonitorTest, TheBoundaryThreadSplitsOnTime) {
  // Real time: a series whose boundaries are 0.2 s apart; the thread must split at each.
  SystemClock clock;
  const double now = clock.unix_time_s();
  std::vector<IntensityInterval> intervals;
  for (int i = 0; i < 20; ++i) intervals.push_back({now + 0.2 * i, now + 0.2 * (i + 1), 10.0 * i});
  auto series = IntensitySeries::create(intervals, "$/kWh", "fast series");
  ASSERT_TRUE(series);
  Devices devices;
  ReplayGpuConfig config;
  config.power_model = ReplayGpu::capped_power_model(300);
  devices.gpus.push_back(std::make_unique<ReplayGpu>(clock, config));
  auto monitor = AccountingMonitor::create(
      devices, clock, std::shared_ptr<IntensitySeries>(std::move(*series)), {});
  ASSERT_TRUE(monitor);
  ASSERT_TRUE((*monitor)->begin_window("w"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  auto m = (*monitor)->end_window("w");
  ASSERT_TRUE(m);
  EXPECT_GE(m->parts.size(), 5u);
  for (size_t i = 1; i < m->parts.size(); ++i) {
    EXPECT_LT(m->parts[i].start_s - (now + 0.2 * std::round((m->parts[i].start_s - now) / 0.2)),
              0.05);  // each split within 50 ms of its boundary
  }
}

TEST(IntensitySeriesTest, ReadsTheBundledCsvAndRefusesBadFiles) {
  auto series = load_intensity_csv(std::string(ZEUS_SOURCE_DIR) + "/data/carbon_hist.csv",
                                   "MISO_MASON_CITY");
  ASSERT_TRUE(series) << series.error().message;
  // 2022-10-20T06:20:00+00:00, 30 minutes, 646.8567445847223
  auto value = (*series)->value_at(*parse_iso8601_utc("2022-10-20T06:25:00Z"));
  ASSERT_TRUE(value);
  EXPECT_DOUBLE_EQ(*value, 646.8567445847223);
  EXPECT_DOUBLE_EQ((*series)->next_boundary_after(*parse_iso8601_utc("2022-10-20T06:25:00Z")),
                   *parse_iso8601_utc("2022-10-20T06:50:00+00:00"));
  EXPECT_EQ((*series)->value_at(0).error().code, ErrorCode::kNotFound);

  EXPECT_DOUBLE_EQ(*parse_iso8601_utc("2022-10-20T08:20:00+02:00"),
                   *parse_iso8601_utc("2022-10-20T06:20:00.000Z"));
  EXPECT_FALSE(parse_iso8601_utc("2022-10-20 06:20"));
  EXPECT_FALSE(parse_iso8601_utc("2022-10-20T06:20:00"));  // no offset: refused, not guessed

  const auto dir = std::filesystem::temp_directory_path();
  const auto bad = dir / ("zeus_bad_intensity_" + std::to_string(getpid()) + ".csv");
  std::ofstream(bad) << "timestamp,duration,value\n2022-10-20T06:20:00Z,30,x\n";
  auto refused = load_intensity_csv(bad.string());
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("line 2"), std::string::npos) << refused.error().message;
  std::ofstream(bad) << "location,timestamp,duration,value\nA,2022-10-20T06:20:00Z,30,1\n"
                        "B,2022-10-20T06:20:00Z,30,2\n";
  EXPECT_NE(load_intensity_csv(bad.string()).error().message.find("several locations"),
            std::string::npos);
  std::ofstream(bad) << "timestamp,duration,value\n2022-10-20T06:20:00Z,30,1\n"
                        "2022-10-20T06:40:00Z,30,2\n";
  EXPECT_NE(load_intensity_csv(bad.string()).error().message.find("overlap"), std::string::npos);
  std::filesystem::remove(bad);
}

// Whatever the provider, a value per kWh that is negative or not finite makes
// the amount unknown with a reason, and an amount that overflows is unknown too (never inf, never
// null with "complete": true).
TEST(AccountingMonitorTest, CarbonValues_NegativeOrOverflowingAmountsAreUnknownWithAReason) {
  Measurement whole;
  whole.gpu_energy_j = {{0, 3.6e6}};  // 1 kWh
  AccountedPart part{0, 10, whole, {}};
  const AccountedMeasurement negative = account_window(whole, {part}, {-0.01}, "gCO2eq");
  EXPECT_FALSE(negative.complete);
  EXPECT_NE(negative.unknown_reason.find("not a finite value >= 0"), std::string::npos)
      << negative.unknown_reason;
  EXPECT_TRUE(negative.gpu.empty());
  whole.gpu_energy_j = {{0, 1e12}};
  part.energy = whole;
  const AccountedMeasurement huge = account_window(whole, {part}, {1.7e308}, "gCO2eq");
  EXPECT_FALSE(huge.complete);
  EXPECT_NE(huge.unknown_reason.find("too large"), std::string::npos) << huge.unknown_reason;
  EXPECT_TRUE(huge.gpu.empty());
  const AccountedMeasurement fine = account_window(whole, {part}, {400.0}, "gCO2eq");
  EXPECT_TRUE(fine.complete);
  EXPECT_NEAR(fine.total(), 1e12 / 3.6e6 * 400, 1);
}

}  // namespace
}  // namespace zeus
