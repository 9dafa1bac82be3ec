// CPU package and DRAM power timelines (issue 23): power from RAPL energy deltas over the
// measured time between reads, across a counter wraparound, on a fake powercap tree read by the
// real RAPL backend; and the PowerMonitor's errors for CPU domains and indices.
#include <chrono>
#include <cmath>
#include <thread>

#include <gtest/gtest.h>

#include "device/rapl/rapl_cpu.h"
#include "testing/fake_sysfs.h"
#include "zeus/common/clock.h"
#include "zeus/monitor/power_monitor.h"
#include "zeus/monitor/power_sampler.h"

namespace zeus {
namespace {

using ::zeus::testing::FakePowercapTree;
using D = PowerDomain;

std::map<int, Cpu*> by_package(const std::vector<std::unique_ptr<Cpu>>& cpus) {
  std::map<int, Cpu*> out;
  for (const auto& cpu : cpus) out[cpu->index()] = cpu.get();
  return out;
}

bool has(const Error& error, const std::string& part) {
  return error.message.find(part) != std::string::npos;
}

// Deterministic: a FakeClock and sample_once() instead of the thread.
TEST(CpuPowerSamplerTest, PowerIsTheEnergyDeltaOverTheMeasuredTimeAcrossAWrap) {
  FakePowercapTree tree;
  tree.add_package(0, 900'000, /*max_energy_range_uj=*/1'000'000);
  tree.add_dram(0, 10'000);
  auto cpus = open_rapl_cpus(tree.root());
  ASSERT_TRUE(cpus.has_value()) << cpus.error().to_string();
  FakeClock clock(100.0);
  PowerSamplerOptions options;
  options.domains = {D::kCpuPackageAverage, D::kCpuDramAverage};
  PowerSampler sampler(clock, {}, by_package(*cpus), options);
  EXPECT_EQ(sampler.cpu_indices(), (std::vector<int>{0}));
  EXPECT_TRUE(sampler.gpu_indices().empty());
  ASSERT_TRUE(sampler.sample_once().has_value());  // the baseline: no sample yet
  EXPECT_TRUE(sampler.samples(0, D::kCpuPackageAverage).empty());

  clock.advance_s(0.5);
  tree.set_package_energy_uj(0, 100'000);  // wrapped: 100'000 + 1'000'000 - 900'000 = 0.2 J
  tree.set_dram_energy_uj(0, 60'000);      // +0.05 J
  ASSERT_TRUE(sampler.sample_once().has_value());
  clock.advance_s(0.25);
  tree.set_package_energy_uj(0, 600'000);  // +0.5 J
  tree.set_dram_energy_uj(0, 60'000);      // nothing: 0 W
  ASSERT_TRUE(sampler.sample_once().has_value());

  auto package = sampler.samples(0, D::kCpuPackageAverage);
  ASSERT_EQ(package.size(), 2u);
  EXPECT_DOUBLE_EQ(package[0].time_s, 100.5);
  EXPECT_NEAR(package[0].power_w, 0.2 / 0.5, 1e-9);  // 0.4 W, not a negative or huge delta
  EXPECT_DOUBLE_EQ(package[1].time_s, 100.75);
  EXPECT_NEAR(package[1].power_w, 0.5 / 0.25, 1e-9);
  auto dram = sampler.samples(0, D::kCpuDramAverage);
  ASSERT_EQ(dram.size(), 2u);
  EXPECT_NEAR(dram[0].power_w, 0.05 / 0.5, 1e-9);
  EXPECT_DOUBLE_EQ(dram[1].power_w, 0.0);
  // Trapezoid over the samples: (0.4 + 2.0) / 2 x 0.25 s.
  EXPECT_NEAR(sampler.energy_j(0, 100.5, 100.75, D::kCpuPackageAverage).value(), 0.3, 1e-9);
}

// Probe of a loaded run: a read 1 ms after the last divided one 0.2 J counter step by 1 ms
// (200 W from a 20 W package). A read closer than half the interval keeps the baseline.
TEST(CpuPowerSamplerTest, AReadTooSoonAfterTheLastIsFoldedIntoTheNextSample) {
  FakePowercapTree tree;
  tree.add_package(0, 0, /*max_energy_range_uj=*/1'000'000'000);
  auto cpus = open_rapl_cpus(tree.root());
  ASSERT_TRUE(cpus.has_value()) << cpus.error().to_string();
  FakeClock clock(10.0);
  PowerSamplerOptions options;
  options.interval_s = 0.05;
  options.domains = {D::kCpuPackageAverage};
  PowerSampler sampler(clock, {}, by_package(*cpus), options);
  ASSERT_TRUE(sampler.sample_once().has_value());  // the baseline
  clock.advance_s(0.001);
  tree.set_package_energy_uj(0, 200'000);  // one 0.2 J step, 1 ms later
  ASSERT_TRUE(sampler.sample_once().has_value());
  EXPECT_TRUE(sampler.samples(0, D::kCpuPackageAverage).empty());
  clock.advance_s(0.049);
  tree.set_package_energy_uj(0, 1'000'000);  // 4 more steps
  ASSERT_TRUE(sampler.sample_once().has_value());
  auto package = sampler.samples(0, D::kCpuPackageAverage);
  ASSERT_EQ(package.size(), 1u);
  EXPECT_NEAR(package[0].power_w, 1.0 / 0.050, 1e-9);  // 20 W over the whole 50 ms
}

TEST(CpuPowerSamplerTest, AnUnreadableCounterIsAnErrorAndNoSample) {
  FakePowercapTree tree;
  tree.add_package(0, 0);
  auto cpus = open_rapl_cpus(tree.root());
  ASSERT_TRUE(cpus.has_value());
  FakeClock clock(1.0);
  PowerSamplerOptions options;
  options.domains = {D::kCpuPackageAverage, D::kCpuDramAverage};  // package 0 has no DRAM zone
  PowerSampler sampler(clock, {}, by_package(*cpus), options);
  auto first = sampler.sample_once();
  ASSERT_FALSE(first.has_value());
  EXPECT_EQ(first.error().code, ErrorCode::kNotSupported);
  EXPECT_TRUE(sampler.samples(0, D::kCpuDramAverage).empty());
}

TEST(CpuPowerMonitorTest, CpuOnlyMonitorSamplesPackageAndDramOnItsThread) {
  FakePowercapTree tree;
  tree.add_package(0, 0);
  tree.add_dram(0, 0);
  tree.add_package(1, 0);
  tree.add_dram(1, 0);
  auto cpus = open_rapl_cpus(tree.root());
  ASSERT_TRUE(cpus.has_value());
  SystemClock clock;
  auto monitor = PowerMonitor::create(clock, {}, by_package(*cpus), PowerMonitorOptions{});
  ASSERT_TRUE(monitor.has_value()) << monitor.error().to_string();
  EXPECT_EQ((*monitor)->domains(), (std::vector<D>{D::kCpuPackageAverage, D::kCpuDramAverage}));
  EXPECT_DOUBLE_EQ((*monitor)->update_period_s(), 0.1);  // nothing to infer from without GPUs
  EXPECT_EQ((*monitor)->cpu_indices(), (std::vector<int>{0, 1}));
  // Package 1 draws 30 W: 3 J per 0.1 s, written in steps as RAPL's counter would move.
  for (int step = 1; step <= 6; ++step) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    tree.set_package_energy_uj(1, static_cast<uint64_t>(step) * 3'000'000);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  auto timeline = (*monitor)->timeline(D::kCpuPackageAverage, 1);
  ASSERT_TRUE(timeline.has_value()) << timeline.error().to_string();
  ASSERT_GE(timeline->size(), 3u);
  double joules = 0.0;
  for (size_t i = 1; i < timeline->size(); ++i) {
    EXPECT_GE((*timeline)[i].time_s, (*timeline)[i - 1].time_s);
  }
  auto span = (*monitor)->sampler().span_s(1, D::kCpuPackageAverage);
  ASSERT_TRUE(span.has_value());
  joules = (*monitor)->energy_j(1, span->first, span->second, D::kCpuPackageAverage)->value();
  EXPECT_GT(joules, 0.0);
  // Package 0 never moved: every sample is 0 W.
  auto idle = (*monitor)->timeline(D::kCpuPackageAverage, 0);
  ASSERT_TRUE(idle.has_value());
  ASSERT_FALSE(idle->empty());
  for (const PowerSample& sample : *idle) EXPECT_DOUBLE_EQ(sample.power_w, 0.0);
  EXPECT_DOUBLE_EQ((*monitor)->power_w(0, std::nullopt, D::kCpuDramAverage)->value(), 0.0);
}

TEST(CpuPowerMonitorTest, BadDomainsIndicesAndTimesAreClearErrors) {
  FakePowercapTree tree;
  tree.add_package(0, 0);  // no DRAM zone
  auto cpus = open_rapl_cpus(tree.root());
  ASSERT_TRUE(cpus.has_value());
  SystemClock clock;
  auto none = PowerMonitor::create(clock, {}, {}, PowerMonitorOptions{});
  ASSERT_FALSE(none.has_value());
  EXPECT_TRUE(has(none.error(), "at least one GPU or CPU package"));

  PowerMonitorOptions dram;
  dram.domains = std::vector<D>{D::kCpuDramAverage};
  auto unsupported = PowerMonitor::create(clock, {}, by_package(*cpus), dram);
  ASSERT_FALSE(unsupported.has_value());
  EXPECT_TRUE(has(unsupported.error(), "cpu_dram_average is not supported"));
  EXPECT_TRUE(has(unsupported.error(), "[cpu_package_average]"));

  PowerMonitorOptions options;
  options.update_period_s = 0.05;
  auto monitor = PowerMonitor::create(clock, {}, by_package(*cpus), options);
  ASSERT_TRUE(monitor.has_value()) << monitor.error().to_string();
  auto unknown = (*monitor)->timeline(D::kCpuPackageAverage, 4);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(
      has(unknown.error(), "CPU package 4 is not monitored; monitored CPU packages are [0]"));
  auto gpu_domain = (*monitor)->timeline(D::kDeviceInstant, 0);
  ASSERT_FALSE(gpu_domain.has_value());
  EXPECT_TRUE(has(gpu_domain.error(), "device_instant is not being monitored"));
  // A query without a domain falls back to the GPU domains, which a CPU-only monitor lacks.
  EXPECT_FALSE((*monitor)->power_w(0).has_value());
  EXPECT_FALSE((*monitor)->timeline(D::kCpuPackageAverage, 0, std::nan(""), 1.0).has_value());
  EXPECT_FALSE((*monitor)->timeline(D::kCpuPackageAverage, 0, 5.0, 1.0).has_value());
  auto nan_time = (*monitor)->power_w(0, std::nan(""), D::kCpuPackageAverage);
  ASSERT_FALSE(nan_time.has_value());
  EXPECT_EQ(nan_time.error().code, ErrorCode::kInvalidArgument);
  // Times outside the timeline: no sample, not an error.
  auto future = (*monitor)->power_w(0, clock.now_s() + 1e6, D::kCpuPackageAverage);
  ASSERT_TRUE(future.has_value());
  EXPECT_FALSE(future->has_value());
  auto past = (*monitor)->energy_j(0, 1.0, 2.0, D::kCpuPackageAverage);
  ASSERT_TRUE(past.has_value());
  EXPECT_FALSE(past->has_value());
}

}  // namespace
}  // namespace zeus
