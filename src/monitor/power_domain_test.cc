#include "zeus/monitor/power_domain.h"

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
  EXPECT_NE(bad.error().message.find("[device_instant, device_average, memory_average, "
                                     "cpu_package_average, cpu_dram_average]"),
            std::string::npos);
  EXPECT_TRUE(is_cpu_power_domain(D::kCpuPackageAverage));
  EXPECT_TRUE(is_cpu_power_domain(D::kCpuDramAverage));
  EXPECT_FALSE(is_cpu_power_domain(D::kDeviceInstant));
}

// A CPU package for the choice rules: only whether it has a DRAM zone matters.
class DramCpu final : public Cpu {
 public:
  explicit DramCpu(bool dram) : dram_(dram) {}
  int index() const override { return 0; }
  std::string name() const override { return "package-0"; }
  Result<uint64_t> package_energy_uj() override { return 5; }
  bool has_dram() const override { return dram_; }
  Result<uint64_t> dram_energy_uj() override {
    if (!dram_) return fail(ErrorCode::kNotSupported, "no DRAM zone");
    return 7;
  }

 private:
  bool dram_;
};

TEST(PowerDomainTest, CpuDomainsNeedAPackageAndDramOnEveryPackage) {
  DramCpu with(true);
  DramCpu without(false);
  EXPECT_TRUE(supported_cpu_power_domains({}).empty());
  EXPECT_EQ(supported_cpu_power_domains({&with}),
            (std::vector<D>{D::kCpuPackageAverage, D::kCpuDramAverage}));
  EXPECT_EQ(supported_cpu_power_domains({&with, &without}),
            (std::vector<D>{D::kCpuPackageAverage}));
  EXPECT_EQ(read_cpu_energy_uj(with, D::kCpuPackageAverage).value(), 5u);
  EXPECT_EQ(read_cpu_energy_uj(with, D::kCpuDramAverage).value(), 7u);
  auto gpu_domain = read_cpu_energy_uj(with, D::kDeviceInstant);
  ASSERT_FALSE(gpu_domain);
  EXPECT_NE(gpu_domain.error().message.find("not a CPU domain"), std::string::npos);
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
