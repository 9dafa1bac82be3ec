#include "zeus/exporter/exporter.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "device/rapl/rapl_cpu.h"
#include "testing/fake_nvml_state.h"
#include "testing/fake_sysfs.h"
#include "zeus/device/replay_gpu.h"

namespace zeus {
namespace {

// One HTTP/1.0 exchange with 127.0.0.1:port; the whole answer (headers and body).
std::string http_exchange(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return "";
  }
  [[maybe_unused]] ssize_t sent = send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string answer;
  char buffer[4096];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0)
    answer.append(buffer, static_cast<size_t>(n));
  close(fd);
  return answer;
}

std::string scrape(int port) {
  return http_exchange(port, "GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n");
}

// The value of the sample whose name and labels are exactly `series`, or NaN.
double sample(const std::string& text, const std::string& series) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return std::nan("");
}

// Counts calls that reach the hardware.
class CountingGpu final : public Gpu {
 public:
  explicit CountingGpu(std::unique_ptr<Gpu> inner) : inner_(std::move(inner)) {}
  std::atomic<int> calls{0};
  GpuVendor vendor() const override { return inner_->vendor(); }
  std::string name() const override { return inner_->name(); }
  std::string uuid() const override { return inner_->uuid(); }
  GpuArchitecture architecture() const override { return inner_->architecture(); }
  int physical_index() const override { return inner_->physical_index(); }
  Result<PowerLimitRangeMw> power_limit_range_mw() override {
    return ++calls, inner_->power_limit_range_mw();
  }
  Result<uint32_t> default_power_limit_mw() override {
    return ++calls, inner_->default_power_limit_mw();
  }
  Result<uint32_t> power_limit_mw() override { return ++calls, inner_->power_limit_mw(); }
  Result<void> set_power_limit_mw(uint32_t mw) override {
    return ++calls, inner_->set_power_limit_mw(mw);
  }
  Result<void> reset_power_limit() override { return ++calls, inner_->reset_power_limit(); }
  Result<uint32_t> instant_power_mw() override { return ++calls, inner_->instant_power_mw(); }
  Result<uint32_t> average_power_mw() override { return ++calls, inner_->average_power_mw(); }
  bool has_energy_counter() override { return inner_->has_energy_counter(); }
  Result<uint64_t> total_energy_mj() override { return ++calls, inner_->total_energy_mj(); }
  Result<bool> persistence_mode() override { return ++calls, inner_->persistence_mode(); }
  Result<void> set_persistence_mode(bool on) override {
    return ++calls, inner_->set_persistence_mode(on);
  }
  Result<std::vector<uint32_t>> supported_memory_clocks_mhz() override {
    return inner_->supported_memory_clocks_mhz();
  }
  Result<std::vector<uint32_t>> supported_sm_clocks_mhz() override {
    return inner_->supported_sm_clocks_mhz();
  }
  Result<void> lock_sm_clocks_mhz(uint32_t a, uint32_t b) override {
    return inner_->lock_sm_clocks_mhz(a, b);
  }
  Result<void> reset_sm_clocks() override { return inner_->reset_sm_clocks(); }
  Result<void> lock_memory_clocks_mhz(uint32_t a, uint32_t b) override {
    return inner_->lock_memory_clocks_mhz(a, b);
  }
  Result<void> reset_memory_clocks() override { return inner_->reset_memory_clocks(); }

 private:
  std::unique_ptr<Gpu> inner_;
};

TEST(EnergySampler, ReadsCountersIntegratesPowerWithoutOneAndReadsRapl) {
  FakeClock clock;
  Devices devices;
  ReplayGpuConfig with_counter;
  with_counter.name = "Replay A100";
  with_counter.power_model = ReplayGpu::capped_power_model(250.0);
  with_counter.initial_energy_mj = 1'000'000;
  auto* counter_gpu = new ReplayGpu(clock, with_counter);
  devices.gpus.emplace_back(counter_gpu);
  ReplayGpuConfig without_counter;
  without_counter.uuid = "GPU-replay-1";
  without_counter.has_energy_counter = false;
  without_counter.power_model =
      ReplayGpu::capped_power_model([](double t_s) { return t_s < 1.0 ? 100.0 : 200.0; });
  devices.gpus.push_back(std::make_unique<ReplayGpu>(clock, without_counter));
  testing::FakePowercapTree tree;
  tree.add_package(0, 10'000'000);
  tree.add_dram(0, 2'000'000);
  devices.cpus = std::move(open_rapl_cpus(tree.root()).value());

  EnergySampler sampler(devices, clock);
  EXPECT_EQ(sampler.latest()->sequence, 0u);
  sampler.sample_once();
  clock.advance_s(2.0);
  tree.set_package_energy_uj(0, 13'000'000);
  tree.set_dram_energy_uj(0, 2'500'000);
  sampler.sample_once();
  auto snapshot = sampler.latest();
  ASSERT_EQ(snapshot->sequence, 2u);
  EXPECT_DOUBLE_EQ(snapshot->time_s, 2.0);
  ASSERT_EQ(snapshot->gpus.size(), 2u);
  EXPECT_DOUBLE_EQ(*snapshot->gpus[0].energy_j, 1000.0 + 500.0);  // initial + 250 W x 2 s
  EXPECT_DOUBLE_EQ(*snapshot->gpus[0].power_w, 250.0);
  EXPECT_DOUBLE_EQ(*snapshot->gpus[0].power_limit_w, 300.0);
  EXPECT_EQ(snapshot->gpus[0].model, "Replay A100");
  // Trapezoid between the two samples: (100 W + 200 W) / 2 x 2 s.
  EXPECT_DOUBLE_EQ(*snapshot->gpus[1].energy_j, 300.0);
  ASSERT_EQ(snapshot->cpus.size(), 2u);
  EXPECT_EQ(snapshot->cpus[0].zone, "package");
  EXPECT_DOUBLE_EQ(snapshot->cpus[0].energy_j, 3.0);
  EXPECT_EQ(snapshot->cpus[1].zone, "dram");
  EXPECT_DOUBLE_EQ(snapshot->cpus[1].energy_j, 0.5);

  const std::string text = prometheus_text(*snapshot);
  EXPECT_NE(text.find("# TYPE zeus_gpu_energy_joules_total counter"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE zeus_gpu_power_watts gauge"), std::string::npos);
  EXPECT_NE(text.find("# TYPE zeus_gpu_power_limit_watts gauge"), std::string::npos);
  EXPECT_NE(text.find("# TYPE zeus_cpu_energy_joules_total counter"), std::string::npos);
  EXPECT_DOUBLE_EQ(
      sample(text,
             R"(zeus_gpu_energy_joules_total{gpu="0",model="Replay A100",uuid="GPU-replay-0"})"),
      1500.0);
  EXPECT_DOUBLE_EQ(sample(text, R"(zeus_cpu_energy_joules_total{package="0",zone="dram"})"), 0.5);

  // A failing read leaves that metric out instead of publishing a wrong value.
  counter_gpu->set_read_error(Error{ErrorCode::kUnavailable, "GPU is lost"});
  sampler.sample_once();
  EXPECT_FALSE(sampler.latest()->gpus[0].energy_j.has_value());
  EXPECT_FALSE(sampler.latest()->gpus[0].power_w.has_value());
  EXPECT_TRUE(sampler.latest()->gpus[1].power_w.has_value());
}

class ExporterOverHttp : public ::testing::Test {
 protected:
  void SetUp() override {
    DiscoverOptions options;
    options.nvml_path = ZEUS_FAKE_NVML_PATH;
    options.rocm_smi_path = "/nonexistent/librocm_smi64.so";
    tree_.add_package(0, 1'000'000);
    options.powercap_root = tree_.root();
    auto found = discover(options);
    ZEUS_CHECK(found && found->gpus.size() == 2, "fake NVML devices");
    devices_ = std::move(*found);
  }
  testing::FakeNvmlEnvironment fake_{
      {testing::FakeNvmlDevice::h100(), testing::FakeNvmlDevice::v100()}};
  testing::FakePowercapTree tree_;
  Devices devices_;
  SystemClock clock_;
};

TEST_F(ExporterOverHttp, ScrapesHaveTheMetricsOfTheFakeDevicesAndCountersGrow) {
  ExporterOptions options;
  options.bind_address = "127.0.0.1";
  options.port = 0;
  options.interval_s = 0.02;
  auto exporter = MetricsExporter::start(devices_, clock_, options);
  ASSERT_TRUE(exporter.has_value()) << exporter.error().to_string();
  ASSERT_GT((*exporter)->port(), 0);
  const auto state = fake_.read();
  const std::string h100 =
      R"({gpu="0",model="NVIDIA H100 80GB HBM3",uuid=")" + state.devices[0].uuid + "\"}";
  const std::string v100 =
      R"({gpu="1",model=")" + state.devices[1].name + R"(",uuid=")" + state.devices[1].uuid + "\"}";

  const std::string first = scrape((*exporter)->port());
  ASSERT_EQ(first.rfind("HTTP/1.", 0), 0u) << first;
  EXPECT_DOUBLE_EQ(sample(first, "zeus_gpu_power_watts" + h100), 350.0) << first;
  EXPECT_DOUBLE_EQ(sample(first, "zeus_gpu_power_limit_watts" + h100), 700.0);
  EXPECT_DOUBLE_EQ(sample(first, "zeus_gpu_power_limit_watts" + v100),
                   state.devices[1].max_limit_mw / 1000.0);
  EXPECT_FALSE(
      std::isnan(sample(first, R"(zeus_cpu_energy_joules_total{package="0",zone="package"})")));
  const double first_h100_j = sample(first, "zeus_gpu_energy_joules_total" + h100);
  const double first_v100_j = sample(first, "zeus_gpu_energy_joules_total" + v100);
  ASSERT_FALSE(std::isnan(first_h100_j));
  ASSERT_FALSE(std::isnan(first_v100_j));

  // Counters are monotone and follow the fake's counter (which grows at 350 W).
  const uint64_t sequence = (*exporter)->latest()->sequence;
  while ((*exporter)->latest()->sequence < sequence + 3)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const std::string second = scrape((*exporter)->port());
  const double energy_now_j = fake_.read().devices[0].energy_mj / 1000.0;
  const double second_h100_j = sample(second, "zeus_gpu_energy_joules_total" + h100);
  EXPECT_GT(second_h100_j, first_h100_j);
  EXPECT_GE(sample(second, "zeus_gpu_energy_joules_total" + v100), first_v100_j);
  EXPECT_LE(second_h100_j, energy_now_j + 1e-6);  // never ahead of the device
  EXPECT_GT(second_h100_j, 0.0);
}

TEST_F(ExporterOverHttp, AScrapeNeverTouchesTheDevices) {
  auto counting = std::make_unique<CountingGpu>(std::move(devices_.gpus[0]));
  CountingGpu* gpu = counting.get();
  devices_.gpus[0] = std::move(counting);
  ExporterOptions options;
  options.bind_address = "127.0.0.1";
  options.port = 0;
  options.interval_s = 3600;  // only the first sample happens during this test
  auto exporter = MetricsExporter::start(devices_, clock_, options);
  ASSERT_TRUE(exporter.has_value()) << exporter.error().to_string();
  const int calls_after_first_sample = gpu->calls.load();
  EXPECT_GT(calls_after_first_sample, 0);
  for (int i = 0; i < 3; ++i)
    EXPECT_NE(scrape((*exporter)->port()).find("zeus_gpu_power_watts"), std::string::npos);
  EXPECT_EQ(gpu->calls.load(), calls_after_first_sample);
}

TEST_F(ExporterOverHttp, PushesToAPushgateway) {
  // A one-request Pushgateway: records what arrives and answers 200.
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  socklen_t length = sizeof(address);
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  const int gateway_port = ntohs(address.sin_port);
  const timeval accept_timeout{10, 0};  // a missing push fails the test instead of hanging it
  setsockopt(listener, SOL_SOCKET, SO_RCVTIMEO, &accept_timeout, sizeof(accept_timeout));
  std::string received;
  std::thread gateway([&] {
    const int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) return;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &accept_timeout, sizeof(accept_timeout));
    bool continued = false;
    char buffer[4096];
    ssize_t n;
    while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) {
      received.append(buffer, static_cast<size_t>(n));
      const size_t head_end = received.find("\r\n\r\n");
      if (head_end == std::string::npos) continue;
      if (!continued && received.find("Expect: 100-continue") < head_end) {
        const std::string go = "HTTP/1.1 100 Continue\r\n\r\n";
        send(fd, go.data(), go.size(), MSG_NOSIGNAL);
        continued = true;
      }
      const size_t length_at = received.find("Content-Length: ");
      const size_t body_bytes =
          length_at < head_end ? std::stoul(received.substr(length_at + 16)) : 0;
      if (received.size() >= head_end + 4 + body_bytes) break;
    }
    const std::string ok = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    send(fd, ok.data(), ok.size(), MSG_NOSIGNAL);
    close(fd);
  });
  ExporterOptions options;
  options.bind_address = "127.0.0.1";
  options.port = 0;
  options.interval_s = 3600;
  options.push_url = "http://127.0.0.1:" + std::to_string(gateway_port);
  options.push_interval_s = 3600;  // the first push happens at start
  auto exporter = MetricsExporter::start(devices_, clock_, options);
  ASSERT_TRUE(exporter.has_value()) << exporter.error().to_string();
  gateway.join();
  close(listener);
  // prometheus-cpp pushes with POST (replaces the metrics of the same names in the group).
  EXPECT_EQ(received.rfind("POST /metrics/job/zeus/instance/", 0), 0u) << received.substr(0, 200);
  EXPECT_NE(received.find("zeus_gpu_power_watts{gpu=\"0\""), std::string::npos);
  EXPECT_NE(received.find("zeus_gpu_energy_joules_total"), std::string::npos);
}

TEST_F(ExporterOverHttp, BadOptionsAndABusyPortAreErrors) {
  ExporterOptions options;
  options.bind_address = "127.0.0.1";
  options.port = 0;
  options.push_url = "ftp://gateway";
  EXPECT_EQ(MetricsExporter::start(devices_, clock_, options).error().code,
            ErrorCode::kInvalidArgument);
  // A push interval whose wait would overflow (the loop spun a core): at most a day.
  options.push_url = "http://127.0.0.1:9";
  options.push_interval_s = 1e12;
  auto spin = MetricsExporter::start(devices_, clock_, options);
  ASSERT_FALSE(spin.has_value());
  EXPECT_NE(spin.error().message.find("--push-interval must be from 0.1 s to a day"),
            std::string::npos)
      << spin.error().message;
  options.push_interval_s = 10;
  options.push_url = "";
  options.interval_s = 0;
  EXPECT_EQ(MetricsExporter::start(devices_, clock_, options).error().code,
            ErrorCode::kInvalidArgument);
  options.interval_s = 1;
  auto first = MetricsExporter::start(devices_, clock_, options);
  ASSERT_TRUE(first.has_value());
  options.port = (*first)->port();
  auto second = MetricsExporter::start(devices_, clock_, options);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(second.error().message.find("--port"), std::string::npos);
}

}  // namespace
}  // namespace zeus
