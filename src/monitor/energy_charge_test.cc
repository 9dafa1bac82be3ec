#include "zeus/monitor/energy_charge.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

namespace zeus {
namespace {

constexpr double kChargeT0 = 1'666'245'600;  // 2022-10-20T06:00:00Z

// Three 30-minute intervals from kChargeT0: 100, 200 and 300 gCO2eq/kWh, then a gap of 30 minutes and
// one more at 400.
std::unique_ptr<IntensitySeries> series() {
  auto made = IntensitySeries::create({{kChargeT0, kChargeT0 + 1800, 100},
                                       {kChargeT0 + 1800, kChargeT0 + 3600, 200},
                                       {kChargeT0 + 3600, kChargeT0 + 5400, 300},
                                       {kChargeT0 + 7200, kChargeT0 + 9000, 400}},
                                      "gCO2eq/kWh", "test series");
  EXPECT_TRUE(made) << made.error().message;
  return std::move(*made);
}

TEST(ChargeConstantPowerTest, AJobAcrossThreeIntervalsIsChargedIntervalByInterval) {
  auto s = series();
  // 1 h at 1 kW (3.6 MJ) from 06:20: 10 min at 100, 30 min at 200, 20 min at 300 g/kWh.
  // By hand: 1/6 kWh x 100 + 1/2 kWh x 200 + 1/3 kWh x 300 = 16.667 + 100 + 100 = 216.667 g.
  auto m = charge_constant_power(*s, kChargeT0 + 1200, 3600, 3.6e6);
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->complete) << m->unknown_reason;
  EXPECT_NEAR(m->total(), 100.0 / 6 + 100 + 100, 1e-9);
  EXPECT_EQ(m->unit, "gCO2eq/kWh");
  ASSERT_EQ(m->parts.size(), 3u);
  EXPECT_DOUBLE_EQ(m->parts[0].start_s, kChargeT0 + 1200);
  EXPECT_DOUBLE_EQ(m->parts[0].end_s, kChargeT0 + 1800);
  EXPECT_DOUBLE_EQ(m->parts[1].end_s, kChargeT0 + 3600);
  EXPECT_DOUBLE_EQ(m->parts[2].end_s, kChargeT0 + 4800);
  EXPECT_NEAR(m->parts[1].energy.gpu_energy_j.at(0), 1.8e6, 1e-6);
  EXPECT_EQ(*m->parts[2].value, 300);
}

TEST(ChargeConstantPowerTest, WithinOneIntervalAndZeroLengthUseThatIntervalsValue) {
  auto s = series();
  auto inside = charge_constant_power(*s, kChargeT0 + 1900, 600, 7.2e6);  // 2 kWh at 200
  ASSERT_TRUE(inside && inside->complete);
  EXPECT_NEAR(inside->total(), 400, 1e-9);
  EXPECT_EQ(inside->parts.size(), 1u);
  auto instant = charge_constant_power(*s, kChargeT0 + 3600, 0, 3.6e6);  // 1 kWh at 300
  ASSERT_TRUE(instant && instant->complete) << instant->unknown_reason;
  EXPECT_NEAR(instant->total(), 300, 1e-9);
}

TEST(ChargeConstantPowerTest, AGapOrTheSeriesEndLeavesTheAmountUnknownWithTheReason) {
  auto s = series();
  auto across_gap = charge_constant_power(*s, kChargeT0 + 5000, 3600, 3.6e6);
  ASSERT_TRUE(across_gap);
  EXPECT_FALSE(across_gap->complete);
  EXPECT_NE(across_gap->unknown_reason.find("test series has no value"), std::string::npos)
      << across_gap->unknown_reason;
  EXPECT_EQ(across_gap->total(), 0);
  // Past the end: boundaries go on every 30 minutes, but the first part has no value; it stops.
  auto after = charge_constant_power(*s, kChargeT0 + 86400, 86400 * 365.0, 1e9);
  ASSERT_TRUE(after);
  EXPECT_FALSE(after->complete);
  EXPECT_EQ(after->parts.size(), 1u);
}

TEST(ChargeConstantPowerTest, AConstantHasOnePartAndBadSpansAreRefused) {
  auto constant = ConstantIntensity::create(0.12, "$/kWh");
  ASSERT_TRUE(constant);
  auto m = charge_constant_power(**constant, 0, 86400 * 30.0, 3.6e8);  // 100 kWh over a month
  ASSERT_TRUE(m && m->complete);
  EXPECT_NEAR(m->total(), 12, 1e-9);
  EXPECT_EQ(m->parts.size(), 1u);
  EXPECT_FALSE(charge_constant_power(**constant, 0, -1, 1));
  EXPECT_FALSE(charge_constant_power(**constant, 0, 1, -1));
  EXPECT_FALSE(charge_constant_power(**constant, NAN, 1, 1));
  EXPECT_FALSE(ConstantIntensity::create(-1, "$/kWh"));
}

TEST(OfflineIntensitySpecTest, NamesConstAndCsvAndRefusesOnlineProviders) {
  auto c = offline_intensity_provider_from_spec("const:420");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(*(*c)->value_at(12345), 420);
  EXPECT_EQ((*c)->unit(), "gCO2eq/kWh");
  auto csv = offline_intensity_provider_from_spec(
      std::string("csv:") + ZEUS_SOURCE_DIR + "/data/carbon_hist.csv:MISO_MASON_CITY", "$/kWh");
  ASSERT_TRUE(csv) << csv.error().message;
  EXPECT_EQ((*csv)->unit(), "$/kWh");
  EXPECT_NEAR(*(*csv)->value_at(1666246800.0 + 60), 646.8567445847223, 1e-9);  // 06:20 row
  auto online = offline_intensity_provider_from_spec("electricitymaps:42.2,-83.7");
  ASSERT_FALSE(online);
  EXPECT_NE(online.error().message.find("reproducible"), std::string::npos);
  EXPECT_NE(online.error().message.find("csv:FILE"), std::string::npos);
  for (const char* bad : {"const:", "const:abc", "const:-3", "wind:1", "420", "openei:1,2,x"}) {
    auto r = offline_intensity_provider_from_spec(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(format_iso8601_utc(kChargeT0), "2022-10-20T06:00:00Z");
  EXPECT_DOUBLE_EQ(*parse_iso8601_utc(format_iso8601_utc(kChargeT0 + 59)), kChargeT0 + 59);
}

}  // namespace
}  // namespace zeus
