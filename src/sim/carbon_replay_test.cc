#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "sim/experiments_fixture.h"
#include "zeus/sim/sim_carbon.h"

namespace zeus::sim {
namespace {

constexpr double kT0 = 1'666'245'600;  // 2022-10-20T06:00:00Z

// A CSV series of hourly values from kT0: 100, 200, 300, 400 gCO2eq/kWh, then nothing.
std::unique_ptr<IntensitySeries> csv_series() {
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("zeus_carbon_replay_" + std::to_string(getpid()) + ".csv");
  {
    std::ofstream out(path);
    out << "location,timestamp,duration,value\n"
           "HERE,2022-10-20T06:00:00+00:00,60,100\n"
           "HERE,2022-10-20T07:00:00+00:00,60,200\n"
           "ELSEWHERE,2022-10-20T07:00:00+00:00,60,9999\n"
           "HERE,2022-10-20T08:00:00+00:00,60,300\n"
           "HERE,2022-10-20T09:00:00+00:00,60,400\n";
  }
  auto series = load_intensity_csv(path.string(), "HERE");
  std::filesystem::remove(path);
  EXPECT_TRUE(series) << series.error().message;
  return std::move(*series);
}

// Two recurrences: the first has two runs (a failed 30-minute run, 1.8 MJ, then a 30-minute
// one, 3.6 MJ), the second one run of 1 h (3.6 MJ).
History two_recurrences() {
  History h;
  RunRecord r;
  r.recurrence = 0;
  r.time_s = 1800;
  r.energy_j = 1.8e6;
  h.runs.push_back(r);
  r.energy_j = 3.6e6;
  h.runs.push_back(r);
  r.recurrence = 1;
  r.time_s = 3600;
  h.runs.push_back(r);
  h.recurrences.push_back({0, 0, 2, true, 3600, 5.4e6, 0});
  h.recurrences.push_back({0, 0, 1, true, 3600, 3.6e6, 0});
  return h;
}

TEST(CarbonReplayTest, RecurrencesStartOnTheScheduleAndRunsFollowEachOther) {
  auto series = csv_series();
  // Recurrence 0 at 06:30: its first run (06:30-07:00, 0.5 kWh at 100) = 50 g, its second
  // (07:00-07:30, 1 kWh at 200) = 200 g. Recurrence 1 at 08:00 (every 1.5 h): 1 kWh at 300.
  const FixedIntervalScheduler schedule(kT0 + 1800, 5400);
  const HistoryCharge charge = charge_history(two_recurrences(), schedule, *series);
  ASSERT_TRUE(charge.complete) << charge.unknown_reason;
  EXPECT_NEAR(charge.amount, 50 + 200 + 300, 1e-9);
  ASSERT_EQ(charge.recurrence_starts_s.size(), 2u);
  EXPECT_DOUBLE_EQ(charge.recurrence_starts_s[1], kT0 + 7200);
  EXPECT_EQ(schedule.describe(), "every 1.5 h from 2022-10-20T06:30:00Z");
}

TEST(CarbonReplayTest, ATimePastTheSeriesMakesTheTotalUnknownNotAnError) {
  auto series = csv_series();
  const FixedIntervalScheduler schedule(kT0 + 1800, 3 * 3600);  // the second at 09:30, to 10:30
  const HistoryCharge charge = charge_history(two_recurrences(), schedule, *series);
  EXPECT_FALSE(charge.complete);
  EXPECT_NE(charge.unknown_reason.find("has no value"), std::string::npos) << charge.unknown_reason;
  EXPECT_EQ(charge.amount, 0);
}

// A scheduler that starts each recurrence when the previous one ended (a stand-in for a
// carbon-aware one): the hook is what decides the times.
class BackToBack final : public RecurrenceScheduler {
 public:
  double start_of(int /*index*/, double previous_end_s) const override {
    return std::isnan(previous_end_s) ? kT0 : previous_end_s;
  }
  std::string describe() const override { return "back to back"; }
};

TEST(CarbonReplayTest, TheSchedulerHookDecidesWhenRecurrencesRun) {
  auto series = csv_series();
  // 06:00-06:30 0.5 kWh x 100, 06:30-07:00 1 kWh x 100, 07:00-08:00 1 kWh x 200.
  const HistoryCharge charge = charge_history(two_recurrences(), BackToBack(), *series);
  ASSERT_TRUE(charge.complete) << charge.unknown_reason;
  EXPECT_NEAR(charge.amount, 50 + 100 + 200, 1e-9);
  EXPECT_DOUBLE_EQ(charge.recurrence_starts_s[1], kT0 + 3600);
}

using testing::ExperimentsTest;

TEST_F(ExperimentsTest, HeadlineChargesEachPolicysEnergyAndReportsGapsAsUnknown) {
  options_.seeds = 2;
  options_.sim.recurrences = 6;
  auto constant = ConstantIntensity::create(420, "gCO2eq/kWh");
  ASSERT_TRUE(constant);
  options_.accounting.carbon = std::move(*constant);
  options_.accounting.price = csv_series();
  // Price from the CSV (values taken as $/kWh): recurrences every 10 minutes stay within it.
  options_.accounting.scheduler = std::make_shared<FixedIntervalScheduler>(kT0, 600);
  auto result = run_headline(options_);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_TRUE(result->accounted());
  EXPECT_EQ(result->carbon_source, "const 420 gCO2eq/kWh");
  for (const PolicyHeadline& p : result->workloads[0].policies) {
    ASSERT_TRUE(p.carbon && p.carbon->complete) << policy_name(p.policy);
    EXPECT_NEAR(p.carbon->amount.mean, p.cum_energy_j.mean / 3.6e6 * 420, 1e-6);
    ASSERT_TRUE(p.cost);
    EXPECT_TRUE(p.cost->complete) << p.cost->unknown_reason;
    // Every value of the series is 100 to 400 per kWh.
    EXPECT_GE(p.cost->amount.mean, p.cum_energy_j.mean / 3.6e6 * 100 - 1e-9);
    EXPECT_LE(p.cost->amount.mean, p.cum_energy_j.mean / 3.6e6 * 400 + 1e-9);
  }
  const std::string table = format_headline_table(*result);
  EXPECT_NE(table.find("cum_gCO2eq"), std::string::npos) << table;

  // Daily recurrences run past the 4-hour series: the price is unknown, the carbon still known.
  options_.accounting.scheduler = std::make_shared<FixedIntervalScheduler>(kT0, 86400);
  auto daily = run_headline(options_);
  ASSERT_TRUE(daily) << daily.error().message;
  for (const PolicyHeadline& p : daily->workloads[0].policies) {
    EXPECT_TRUE(p.carbon->complete);
    EXPECT_FALSE(p.cost->complete);
    EXPECT_NE(p.cost->unknown_reason.find("has no value"), std::string::npos);
  }
  EXPECT_NE(format_headline_table(*daily).find("unknown: "), std::string::npos);

  // Without a scheduler, accounting is refused; without providers, nothing is charged.
  options_.accounting.scheduler.reset();
  EXPECT_FALSE(run_headline(options_));
  options_.accounting = {};
  auto plain = run_headline(options_);
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->accounted());
  EXPECT_FALSE(plain->workloads[0].policies[0].carbon.has_value());
  EXPECT_EQ(format_headline_table(*plain).find("cum_gCO2eq"), std::string::npos);
}

}  // namespace
}  // namespace zeus::sim
