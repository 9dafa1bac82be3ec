#include "zeus/power_domain.h"

#include <gtest/gtest.h>

namespace zeus {
namespace {

using D = PowerDomain;

bool mentions(const Result<std::vector<D>>& r, const std::string& part) {
  return !r && r.error().message.find(part) != std::string::npos;
}

TEST(PowerDomainTest, NamesRoundTripAndUnknownNamesListTheChoices) {
  for (D domain : kAllPowerDomains) {
    EXPECT_EQ(parse_power_domain(power_domain_name(domain)).value(), domain);
  }
  auto bad = parse_power_domain("device_peak");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.error().message.find("[device_instant, device_average, memory_average]"),
            std::string::npos);
}

TEST(PowerDomainTest, NoRequestMeansEverySupportedDomain) {
  EXPECT_EQ(choose_power_domains(std::nullopt, {D::kDeviceInstant, D::kMemoryAverage}).value(),
            (std::vector<D>{D::kDeviceInstant, D::kMemoryAverage}));
  auto none = choose_power_domains(std::nullopt, {});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kNotSupported);
}

TEST(PowerDomainTest, RequestKeepsOrderDropsRepeatsAndRejectsUnsupported) {
  const std::vector<D> all = {D::kDeviceInstant, D::kDeviceAverage, D::kMemoryAverage};
  EXPECT_EQ(choose_power_domains(
                std::vector<D>{D::kMemoryAverage, D::kDeviceInstant, D::kMemoryAverage}, all)
                .value(),
            (std::vector<D>{D::kMemoryAverage, D::kDeviceInstant}));
  auto unsupported = choose_power_domains(std::vector<D>{D::kMemoryAverage},
                                          {D::kDeviceInstant, D::kDeviceAverage});
  EXPECT_TRUE(mentions(unsupported, "memory_average is not supported"));
  EXPECT_TRUE(mentions(unsupported, "[device_instant, device_average]"));
  EXPECT_TRUE(mentions(choose_power_domains(std::vector<D>{}, all), "non-empty"));
}

TEST(PowerDomainTest, QueriesFallBackFromInstantToAverage) {
  EXPECT_EQ(resolve_power_domain(std::nullopt, {D::kDeviceAverage, D::kDeviceInstant}).value(),
            D::kDeviceInstant);
  EXPECT_EQ(resolve_power_domain(std::nullopt, {D::kMemoryAverage, D::kDeviceAverage}).value(),
            D::kDeviceAverage);
  EXPECT_FALSE(resolve_power_domain(std::nullopt, {D::kMemoryAverage}));
  EXPECT_EQ(resolve_power_domain(D::kMemoryAverage, {D::kMemoryAverage}).value(),
            D::kMemoryAverage);
  auto not_monitored = resolve_power_domain(D::kDeviceInstant, {D::kDeviceAverage});
  ASSERT_FALSE(not_monitored);
  EXPECT_NE(not_monitored.error().message.find("device_instant is not being monitored"),
            std::string::npos);
}

}  // namespace
}  // namespace zeus
