#include "zeus/monitor/energy_monitor.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "zeus/common/log.h"
#include "zeus/device/replay_gpu.h"

namespace zeus {
namespace {

// RAPL counters are the one thing mocked in-process.
class FakeCpu final : public Cpu {
 public:
  FakeCpu(int index, bool dram) : index_(index), dram_(dram) {}
  int index() const override { return index_; }
  std::string name() const override { return "package-" + std::to_string(index_); }
  Result<uint64_t> package_energy_uj() override {
    if (denied) return fail(ErrorCode::kPermissionDenied, "energy_uj is readable only by root");
    return package_uj;
  }
  bool has_dram() const override { return dram_; }
  Result<uint64_t> dram_energy_uj() override {
    if (!dram_) return fail(ErrorCode::kNotSupported, "no DRAM zone");
    return dram_uj;
  }
  uint64_t package_uj = 1'000'000;
  uint64_t dram_uj = 5'000'000;
  bool denied = false;

 private:
  int index_;
  bool dram_;
};

ReplayGpu* add_gpu(Devices& devices, Clock& clock, double draw_w, bool counter = true,
                   double counter_period_s = 0.0) {
  ReplayGpuConfig config;
  config.uuid = "GPU-replay-" + std::to_string(devices.gpus.size());
  config.power_model = ReplayGpu::capped_power_model(draw_w);
  config.has_energy_counter = counter;
  config.counter_update_period_s = counter_period_s;
  config.initial_energy_mj = 123'456;
  auto gpu = std::make_unique<ReplayGpu>(clock, config);
  ReplayGpu* raw = gpu.get();
  devices.gpus.push_back(std::move(gpu));
  return raw;
}

FakeCpu* add_cpu(Devices& devices, bool dram) {
  auto cpu = std::make_unique<FakeCpu>(static_cast<int>(devices.cpus.size()), dram);
  FakeCpu* raw = cpu.get();
  devices.cpus.push_back(std::move(cpu));
  return raw;
}

// Captures warnings (ctest runs with ZEUS_LOG_LEVEL=error, so the level is lowered here).
class EnergyMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_level_ = log_level();
    set_log_level(LogLevel::kWarning);
    set_log_sink([this](LogLevel level, std::string_view message) {
      if (level == LogLevel::kWarning) warnings_.emplace_back(message);
    });
  }
  void TearDown() override {
    set_log_sink(nullptr);
    set_log_level(saved_level_);
  }

  std::unique_ptr<EnergyMonitor> make_monitor(EnergyMonitorOptions options = {}) {
    options.start_sampler_thread = false;
    auto monitor = EnergyMonitor::create(devices_, clock_, std::move(options));
    EXPECT_TRUE(monitor.has_value()) << monitor.error().to_string();
    return monitor ? std::move(*monitor) : nullptr;
  }

  FakeClock clock_{10.0};
  Devices devices_;
  std::vector<std::string> warnings_;
  LogLevel saved_level_ = LogLevel::kWarning;
};

TEST_F(EnergyMonitorTest, MeasuresEveryGpuOverAWindow) {
  add_gpu(devices_, clock_, 100.0);
  ReplayGpu* gpu1 = add_gpu(devices_, clock_, 250.0);
  auto monitor = make_monitor();
  EXPECT_EQ(monitor->gpu_indices(), (std::vector<int>{0, 1}));
  ASSERT_TRUE(monitor->begin_window("step").has_value());
  EXPECT_TRUE(monitor->is_window_open("step"));
  clock_.advance_s(2.0);
  ASSERT_TRUE(gpu1->set_power_limit_mw(150'000).has_value());
  clock_.advance_s(1.0);
  auto m = monitor->end_window("step");
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  EXPECT_FALSE(monitor->is_window_open("step"));
  EXPECT_DOUBLE_EQ(m->time_s, 3.0);
  EXPECT_DOUBLE_EQ(m->gpu_energy_j.at(0), 300.0);
  EXPECT_DOUBLE_EQ(m->gpu_energy_j.at(1), 650.0);
  EXPECT_TRUE(m->cpu_energy_j.empty());
  EXPECT_DOUBLE_EQ(m->total_energy_j(), 950.0);
  EXPECT_DOUBLE_EQ(m->total_energy_with_cpu_j(), 950.0);  // no CPU measured
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(EnergyMonitorTest, WindowsNestAndOverlap) {
  ReplayGpu* gpu = add_gpu(devices_, clock_, 200.0);
  auto monitor = make_monitor();
  ASSERT_TRUE(monitor->begin_window("outer").has_value());
  clock_.advance_s(1.0);
  ASSERT_TRUE(monitor->begin_window("inner").has_value());
  clock_.advance_s(1.0);
  ASSERT_TRUE(monitor->begin_window("overlap").has_value());
  ASSERT_TRUE(gpu->set_power_limit_mw(100'000).has_value());
  clock_.advance_s(1.0);
  auto inner = monitor->end_window("inner");  // t = 1 .. 3
  clock_.advance_s(1.0);
  auto outer = monitor->end_window("outer");  // t = 0 .. 4
  clock_.advance_s(2.0);
  auto overlap = monitor->end_window("overlap");  // t = 2 .. 6
  ASSERT_TRUE(inner && outer && overlap);
  EXPECT_DOUBLE_EQ(inner->time_s, 2.0);
  EXPECT_DOUBLE_EQ(inner->gpu_energy_j.at(0), 300.0);
  EXPECT_DOUBLE_EQ(outer->time_s, 4.0);
  EXPECT_DOUBLE_EQ(outer->gpu_energy_j.at(0), 600.0);
  EXPECT_DOUBLE_EQ(overlap->time_s, 4.0);
  EXPECT_DOUBLE_EQ(overlap->gpu_energy_j.at(0), 400.0);
}

TEST_F(EnergyMonitorTest, OpenNamesUnknownNamesCancelAndRestart) {
  add_gpu(devices_, clock_, 100.0);
  auto monitor = make_monitor();
  ASSERT_TRUE(monitor->begin_window("a").has_value());
  auto again = monitor->begin_window("a");
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(again.error().message.find("restart"), std::string::npos);

  auto unknown = monitor->end_window("b");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
  EXPECT_NE(unknown.error().message.find("'b'"), std::string::npos);

  clock_.advance_s(5.0);
  ASSERT_TRUE(monitor->begin_window("a", true, /*restart=*/true).has_value());  // from t = 15
  clock_.advance_s(1.0);
  auto restarted = monitor->end_window("a");
  ASSERT_TRUE(restarted.has_value());
  EXPECT_DOUBLE_EQ(restarted->time_s, 1.0);
  EXPECT_DOUBLE_EQ(restarted->gpu_energy_j.at(0), 100.0);

  ASSERT_TRUE(monitor->begin_window("c").has_value());
  clock_.advance_s(1.0);
  auto cancelled = monitor->end_window("c", true, /*cancel=*/true);
  ASSERT_TRUE(cancelled.has_value());
  EXPECT_DOUBLE_EQ(cancelled->time_s, 0.0);
  EXPECT_TRUE(cancelled->gpu_energy_j.empty());
  EXPECT_FALSE(monitor->is_window_open("c"));
  EXPECT_EQ(monitor->end_window("c").error().code, ErrorCode::kNotFound);
  // restart of a name that is not open simply begins it.
  EXPECT_TRUE(monitor->begin_window("c", true, true).has_value());
}

TEST_F(EnergyMonitorTest, SyncRunsBeforeTimestampAndRead) {
  add_gpu(devices_, clock_, 100.0);
  int sync_calls = 0;
  EnergyMonitorOptions options;
  // Waiting for queued GPU work takes 1 s of (fake) time; it must be inside the window edges.
  options.sync = [&] {
    ++sync_calls;
    clock_.advance_s(1.0);
  };
  auto monitor = make_monitor(std::move(options));
  ASSERT_TRUE(monitor->begin_window("w").has_value());  // sync to t = 11, stamp, read
  clock_.advance_s(2.0);
  auto m = monitor->end_window("w");  // sync to t = 14, stamp, read
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(sync_calls, 2);
  EXPECT_DOUBLE_EQ(m->time_s, 3.0);
  EXPECT_DOUBLE_EQ(m->gpu_energy_j.at(0), 300.0);

  ASSERT_TRUE(monitor->begin_window("nosync", /*sync=*/false).has_value());
  clock_.advance_s(2.0);
  auto unsynced = monitor->end_window("nosync", /*sync=*/false);
  EXPECT_EQ(sync_calls, 2);
  EXPECT_DOUBLE_EQ(unsynced->time_s, 2.0);
}

TEST_F(EnergyMonitorTest, SelectsGpusAndRejectsUnknownIndices) {
  add_gpu(devices_, clock_, 100.0);
  add_gpu(devices_, clock_, 200.0);
  auto missing = EnergyMonitor::create(devices_, clock_, {.gpu_indices = std::vector<int>{0, 3}});
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(missing.error().message, "GPU index 3 does not exist (2 GPUs visible: 0, 1)");
  auto twice = EnergyMonitor::create(devices_, clock_, {.gpu_indices = std::vector<int>{1, 1}});
  EXPECT_EQ(twice.error().code, ErrorCode::kInvalidArgument);

  auto monitor = make_monitor({.gpu_indices = std::vector<int>{1}});
  EXPECT_EQ(monitor->gpu_indices(), (std::vector<int>{1}));
  ASSERT_TRUE(monitor->begin_window("w").has_value());
  clock_.advance_s(1.0);
  auto m = monitor->end_window("w");
  ASSERT_EQ(m->gpu_energy_j.size(), 1u);
  EXPECT_DOUBLE_EQ(m->gpu_energy_j.at(1), 200.0);
}

TEST_F(EnergyMonitorTest, ZeroEnergyWarnsAndCanBeApproximated) {
  add_gpu(devices_, clock_, 200.0, true, /*counter_period_s=*/0.1);
  clock_.set_s(10.21);
  auto monitor = make_monitor();
  ASSERT_TRUE(monitor->begin_window("short").has_value());
  clock_.set_s(10.25);  // no counter update in between
  auto m = monitor->end_window("short");
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(m->gpu_energy_j.at(0), 0.0);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("'short'"), std::string::npos);
  EXPECT_NE(warnings_[0].find("approximate_zero_energy"), std::string::npos);

  // An empty window (no time passed) is not suspicious.
  ASSERT_TRUE(monitor->begin_window("empty").has_value());
  ASSERT_TRUE(monitor->end_window("empty").has_value());
  EXPECT_EQ(warnings_.size(), 1u);

  auto approximating = make_monitor({.approximate_zero_energy = true});
  ASSERT_TRUE(approximating->begin_window("short").has_value());
  clock_.set_s(10.29);
  auto approximated = approximating->end_window("short");
  ASSERT_TRUE(approximated.has_value());
  EXPECT_NEAR(approximated->gpu_energy_j.at(0), 200.0 * 0.04, 1e-9);
  // As upstream: with the approximation on, a 0 J reading is not a warning (only info).
  EXPECT_EQ(warnings_.size(), 1u);
}

TEST_F(EnergyMonitorTest, SamplesGpusWithoutACounter) {
  ReplayGpu* counted = add_gpu(devices_, clock_, 100.0);
  ReplayGpu* sampled = add_gpu(devices_, clock_, 150.0, /*counter=*/false);
  auto monitor = make_monitor();
  ASSERT_TRUE(monitor->begin_window("w").has_value());
  clock_.advance_s(2.0);
  auto m = monitor->end_window("w");
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  EXPECT_DOUBLE_EQ(m->gpu_energy_j.at(0), 200.0);
  EXPECT_DOUBLE_EQ(m->gpu_energy_j.at(1), 300.0);
  EXPECT_NEAR(m->gpu_energy_j.at(1), sampled->energy_j() - 123.456, 1e-9);
  (void)counted;
}

TEST_F(EnergyMonitorTest, SamplerThreadMeasuresOnTheSystemClock) {
  SystemClock clock;
  Devices devices;
  add_gpu(devices, clock, 150.0, /*counter=*/false);
  auto monitor = EnergyMonitor::create(devices, clock, {.sampler_interval_s = 0.005});
  ASSERT_TRUE(monitor.has_value());
  ASSERT_TRUE((*monitor)->begin_window("w").has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto m = (*monitor)->end_window("w");
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  EXPECT_GT(m->time_s, 0.0);
  // The window's time spans its edge reads; the energy spans the edge samples taken inside
  // them (nothing is extrapolated): equal up to the reads' few microseconds, never above.
  EXPECT_LE(m->gpu_energy_j.at(0), 150.0 * m->time_s + 1e-9);
  EXPECT_NEAR(m->gpu_energy_j.at(0), 150.0 * m->time_s, 150.0 * 0.002);
}

TEST_F(EnergyMonitorTest, FailedReadFailsEndButKeepsTheWindow) {
  ReplayGpu* gpu = add_gpu(devices_, clock_, 100.0);
  auto monitor = make_monitor();
  ASSERT_TRUE(monitor->begin_window("w").has_value());
  gpu->set_read_error(Error{ErrorCode::kUnavailable, "GPU has fallen off the bus"});
  auto m = monitor->end_window("w");
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(m.error().message.find("GPU 0"), std::string::npos);
  EXPECT_TRUE(monitor->is_window_open("w"));
  EXPECT_FALSE(monitor->begin_window("x").has_value());
  EXPECT_FALSE(monitor->is_window_open("x"));
  gpu->set_read_error(std::nullopt);
  clock_.advance_s(1.0);
  EXPECT_DOUBLE_EQ(monitor->end_window("w")->gpu_energy_j.at(0), 100.0);
}

TEST_F(EnergyMonitorTest, MeasuresCpuPackagesAndDram) {
  add_gpu(devices_, clock_, 100.0);
  FakeCpu* cpu0 = add_cpu(devices_, /*dram=*/true);
  FakeCpu* cpu1 = add_cpu(devices_, /*dram=*/false);
  auto monitor = make_monitor();
  EXPECT_EQ(monitor->cpu_indices(), (std::vector<int>{0, 1}));
  ASSERT_TRUE(monitor->begin_window("w").has_value());
  clock_.advance_s(1.0);
  cpu0->package_uj += 65'000'000;
  cpu0->dram_uj += 7'500'000;
  cpu1->package_uj += 40'000'000;
  auto m = monitor->end_window("w");
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(m->cpu_energy_j.at(0), 65.0);
  EXPECT_DOUBLE_EQ(m->cpu_energy_j.at(1), 40.0);
  EXPECT_DOUBLE_EQ(m->dram_energy_j.at(0), 7.5);
  EXPECT_EQ(m->dram_energy_j.count(1), 0u);
  EXPECT_DOUBLE_EQ(m->total_energy_j(), 100.0);  // upstream's meaning: the GPUs only
  // DRAM is not inside the RAPL package counter, so the sum with CPUs adds it.
  EXPECT_DOUBLE_EQ(m->total_energy_with_cpu_j(), 100.0 + 65.0 + 40.0 + 7.5);
}

TEST_F(EnergyMonitorTest, UnreadableRaplTurnsCpusOffUnlessAskedFor) {
  add_gpu(devices_, clock_, 100.0);
  add_cpu(devices_, true)->denied = true;
  auto monitor = make_monitor();
  EXPECT_TRUE(monitor->cpu_indices().empty());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("CPU energy measurement is off"), std::string::npos);
  ASSERT_TRUE(monitor->begin_window("w").has_value());
  clock_.advance_s(1.0);
  EXPECT_TRUE(monitor->end_window("w")->cpu_energy_j.empty());

  auto explicit_cpus =
      EnergyMonitor::create(devices_, clock_, {.cpu_indices = std::vector<int>{0}});
  ASSERT_FALSE(explicit_cpus.has_value());
  EXPECT_EQ(explicit_cpus.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(explicit_cpus.error().message.find("root"), std::string::npos);
  auto unknown = EnergyMonitor::create(devices_, clock_, {.cpu_indices = std::vector<int>{2}});
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
}

TEST_F(EnergyMonitorTest, LogsOneRowPerEndedWindow) {
  add_gpu(devices_, clock_, 100.0);
  add_gpu(devices_, clock_, 200.0);
  FakeCpu* cpu = add_cpu(devices_, /*dram=*/true);
  const std::string path =
      ::testing::TempDir() + "zeus_energy_monitor_" + std::to_string(::getpid()) + ".csv";
  {
    auto monitor = make_monitor({.log_file = path});
    ASSERT_TRUE(monitor->begin_window("__GlobalPowerLimitOptimizer_300").has_value());
    clock_.advance_s(1.5);
    cpu->package_uj += 30'000'000;
    cpu->dram_uj += 2'000'000;
    ASSERT_TRUE(monitor->end_window("__GlobalPowerLimitOptimizer_300").has_value());
    ASSERT_TRUE(monitor->begin_window("cancelled").has_value());
    clock_.advance_s(1.0);
    ASSERT_TRUE(monitor->end_window("cancelled", true, /*cancel=*/true).has_value());
    ASSERT_TRUE(monitor->begin_window("second").has_value());
    clock_.advance_s(0.5);
    ASSERT_TRUE(monitor->end_window("second").has_value());
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  // FakeClock's Unix time is 1.7e9 + now_s(); the clock starts at 10 s.
  EXPECT_EQ(text.str(),
            "start_time,window_name,elapsed_time,gpu0_energy,gpu1_energy,cpu0_energy,"
            "dram0_energy\n"
            "1700000010.0,__GlobalPowerLimitOptimizer_300,1.5,150.0,300.0,30.0,2.0\n"
            "1700000012.5,second,0.5,50.0,100.0,0.0,0.0\n");
  std::filesystem::remove(path);
}

TEST_F(EnergyMonitorTest, UnwritableLogFailsCreate) {
  add_gpu(devices_, clock_, 100.0);
  auto monitor =
      EnergyMonitor::create(devices_, clock_, {.log_file = "/nonexistent-folder/energy.csv"});
  ASSERT_FALSE(monitor.has_value());
  EXPECT_EQ(monitor.error().code, ErrorCode::kUnavailable);
}

TEST_F(EnergyMonitorTest, GpuOnlyLogIsUpstreamsFormatEvenWithCpus) {
  add_gpu(devices_, clock_, 100.0);
  FakeCpu* cpu = add_cpu(devices_, /*dram=*/true);
  const std::string path =
      ::testing::TempDir() + "zeus_energy_monitor_gpu_only_" + std::to_string(::getpid()) + ".csv";
  {
    auto monitor = make_monitor({.log_file = path, .log_gpu_columns_only = true});
    EXPECT_EQ(monitor->cpu_indices(), (std::vector<int>{0}));  // CPUs are still measured
    ASSERT_TRUE(monitor->begin_window("training_step").has_value());
    clock_.advance_s(0.25);
    cpu->package_uj += 5'000'000;
    auto m = monitor->end_window("training_step");
    ASSERT_TRUE(m.has_value());
    EXPECT_DOUBLE_EQ(m->cpu_energy_j.at(0), 5.0);
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "start_time,window_name,elapsed_time,gpu0_energy\n"
            "1700000010.0,training_step,0.25,25.0\n");
  std::filesystem::remove(path);
}

TEST_F(EnergyMonitorTest, ResetWindowsDropsEveryOpenWindowUnlogged) {
  add_gpu(devices_, clock_, 100.0);
  auto monitor = make_monitor();
  ASSERT_TRUE(monitor->begin_window("b").has_value());
  ASSERT_TRUE(monitor->begin_window("a").has_value());
  EXPECT_EQ(monitor->reset_windows(), (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(monitor->is_window_open("a"));
  EXPECT_EQ(monitor->end_window("b").error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(monitor->reset_windows().empty());
  ASSERT_TRUE(monitor->begin_window("a").has_value());  // the name is free again
}

}  // namespace
}  // namespace zeus
