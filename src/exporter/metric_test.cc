// The window metrics (zeus/exporter/metric.h) against a recording Pushgateway served by the
// project's HTTP
// server on 127.0.0.1, on a replayed GPU at 250 W and a fake clock. (The real Debian
// prometheus-pushgateway and prometheus run in python/tests/test_metric_prometheus.py.)
#include "zeus/exporter/metric.h"

#include <cmath>
#include <mutex>
#include <sstream>

#include <gtest/gtest.h>

#include "http/server.h"
#include "zeus/device/replay_gpu.h"

namespace zeus {
namespace {

struct Push {
  std::string method, path, body;
};

class RecordingGateway {
 public:
  RecordingGateway() {
    auto server = http::HttpServer::start(
        {}, http::HttpServer::blocking([this](const http::HttpRequest& request, const http::Peer&) {
          std::lock_guard<std::mutex> lock(mutex_);
          pushes_.push_back({request.method, request.path, request.body});
          return http::HttpResponse{status_, "", "text/plain", {}, false};
        }));
    ZEUS_CHECK(server.has_value(), "recording gateway");
    server_ = std::move(*server);
    port_ = server_->listen_tcp("127.0.0.1", 0).value();
  }
  ~RecordingGateway() { server_->stop(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<Push> pushes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return pushes_;
  }
  void answer(int status) {
    std::lock_guard<std::mutex> lock(mutex_);
    status_ = status;
  }

 private:
  std::unique_ptr<http::HttpServer> server_;
  int port_ = 0;
  std::mutex mutex_;
  std::vector<Push> pushes_;
  int status_ = 200;
};

// The value of the sample whose name and labels are exactly `series`, or NaN.
double metric_sample(const std::string& text, const std::string& series) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return std::nan("");
}

class WindowMetrics : public ::testing::Test {
 protected:
  void SetUp() override {
    ReplayGpuConfig config;
    config.power_model = ReplayGpu::capped_power_model(250.0);
    devices_.gpus.push_back(std::make_unique<ReplayGpu>(clock_, config));
  }
  FakeClock clock_;
  Devices devices_;
  RecordingGateway gateway_;
};

TEST_F(WindowMetrics, HistogramObservesEachWindowAndPutsTheGroup) {
  EnergyHistogramOptions options;
  options.pushgateway_url = gateway_.url();
  options.job = "train job";
  options.gpu_buckets_j = {100.0, 600.0};
  auto histogram = EnergyHistogram::create(devices_, clock_, options);
  ASSERT_TRUE(histogram.has_value()) << histogram.error().message;
  ASSERT_TRUE((*histogram)->begin_window("step").has_value());
  clock_.advance_s(2.0);  // 500 J
  auto first = (*histogram)->end_window("step");
  ASSERT_TRUE(first.has_value()) << first.error().message;
  EXPECT_DOUBLE_EQ(first->measurement.gpu_energy_j.at(0), 500.0);
  EXPECT_TRUE(first->out_of_range.empty());
  ASSERT_TRUE((*histogram)->begin_window("step").has_value());
  clock_.advance_s(4.0);  // 1000 J: above the largest bound
  auto second = (*histogram)->end_window("step");
  ASSERT_TRUE(second.has_value());
  ASSERT_EQ(second->out_of_range.size(), 1u);
  EXPECT_NE(second->out_of_range[0].find("above the largest bucket bound 600"), std::string::npos);

  auto pushes = gateway_.pushes();
  ASSERT_EQ(pushes.size(), 2u);
  EXPECT_EQ(pushes[1].method, "PUT");
  EXPECT_EQ(pushes[1].path, "/metrics/job/train job");
  const std::string& text = pushes[1].body;
  EXPECT_NE(text.find("# TYPE energy_monitor_gpu_energy_joules histogram"), std::string::npos)
      << text;
  const std::string labels = R"(index="0",window="step")";
  EXPECT_DOUBLE_EQ(metric_sample(text, "energy_monitor_gpu_energy_joules_count{" + labels + "}"), 2.0);
  EXPECT_DOUBLE_EQ(metric_sample(text, "energy_monitor_gpu_energy_joules_sum{" + labels + "}"), 1500.0);
  EXPECT_DOUBLE_EQ(
      metric_sample(text, "energy_monitor_gpu_energy_joules_bucket{" + labels + R"(,le="600"})"), 1.0);
  EXPECT_DOUBLE_EQ(
      metric_sample(text, "energy_monitor_gpu_energy_joules_bucket{" + labels + R"(,le="+Inf"})"), 2.0);
  // No CPU was measured: no empty CPU or DRAM families are pushed.
  EXPECT_EQ(text.find("energy_monitor_cpu"), std::string::npos);

  EXPECT_EQ((*histogram)->end_window("never").error().code, ErrorCode::kNotFound);
}

TEST_F(WindowMetrics, HistogramRefusesBadSettings) {
  EnergyHistogramOptions options;
  options.pushgateway_url = gateway_.url();
  options.job = "j";
  options.gpu_buckets_j = {};
  auto empty = EnergyHistogram::create(devices_, clock_, options);
  ASSERT_FALSE(empty.has_value());
  EXPECT_NE(empty.error().message.find("GPU bucket range cannot be empty"), std::string::npos);
  options.gpu_buckets_j = {10.0, 5.0};
  EXPECT_EQ(EnergyHistogram::create(devices_, clock_, options).error().code,
            ErrorCode::kInvalidArgument);
  options.gpu_buckets_j = {10.0};
  options.job = "";
  EXPECT_EQ(EnergyHistogram::create(devices_, clock_, options).error().code,
            ErrorCode::kInvalidArgument);
  options.job = "j";
  options.pushgateway_url = "https://gateway:9091/x";
  auto bad_url = EnergyHistogram::create(devices_, clock_, options);
  ASSERT_FALSE(bad_url.has_value());
  EXPECT_NE(bad_url.error().message.find("pushgateway_url"), std::string::npos);
  options.pushgateway_url = gateway_.url();
  options.gpu_indices = std::vector<int>{3};
  EXPECT_EQ(EnergyHistogram::create(devices_, clock_, options).error().code, ErrorCode::kNotFound);
}

TEST_F(WindowMetrics, APushTheGatewayRefusesIsAnErrorNamingIt) {
  gateway_.answer(400);
  EnergyHistogramOptions options;
  options.pushgateway_url = gateway_.url();
  options.job = "j";
  auto histogram = EnergyHistogram::create(devices_, clock_, options);
  ASSERT_TRUE(histogram.has_value());
  ASSERT_TRUE((*histogram)->begin_window("w").has_value());
  auto ended = (*histogram)->end_window("w");
  ASSERT_FALSE(ended.has_value());
  EXPECT_EQ(ended.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(ended.error().message.find("answered HTTP 400"), std::string::npos);
}

TEST_F(WindowMetrics, CumulativeCounterStartsAtZeroAndAddsTheLastPeriodAtTheEnd) {
  EnergyCumulativeCounterOptions options;
  options.pushgateway_url = gateway_.url();
  options.job = "counter";
  options.update_period_s = 3600;  // the thread never runs: the fake clock drives the energy
  auto counter = EnergyCumulativeCounter::create(devices_, clock_, options);
  ASSERT_TRUE(counter.has_value()) << counter.error().message;
  ASSERT_TRUE((*counter)->begin_window("train").has_value());
  EXPECT_EQ((*counter)->begin_window("train").error().code, ErrorCode::kInvalidArgument);
  clock_.advance_s(3.0);  // 750 J
  ASSERT_TRUE((*counter)->end_window("train").has_value());
  EXPECT_DOUBLE_EQ((*counter)->gpu_energy_j("train", 0), 750.0);
  auto pushes = gateway_.pushes();
  ASSERT_EQ(pushes.size(), 2u);
  const std::string series = R"(energy_monitor_gpu_energy_joules_total{index="0",window="train"})";
  EXPECT_DOUBLE_EQ(metric_sample(pushes[0].body, series), 0.0) << pushes[0].body;
  EXPECT_DOUBLE_EQ(metric_sample(pushes[1].body, series), 750.0) << pushes[1].body;
  EXPECT_EQ((*counter)->end_window("train").error().code, ErrorCode::kNotFound);
  options.update_period_s = 0;
  EXPECT_EQ(EnergyCumulativeCounter::create(devices_, clock_, options).error().code,
            ErrorCode::kInvalidArgument);
}

TEST_F(WindowMetrics, PowerGaugePushesAtBeginAndRefusesAnUnreachableGateway) {
  PowerGaugeOptions options;
  options.pushgateway_url = gateway_.url();
  options.job = "power";
  auto gauge = PowerGauge::create(devices_, options);
  ASSERT_TRUE(gauge.has_value()) << gauge.error().message;
  ASSERT_TRUE((*gauge)->begin_window("train").has_value());
  auto pushes = gateway_.pushes();
  ASSERT_EQ(pushes.size(), 1u);
  EXPECT_DOUBLE_EQ(
      metric_sample(pushes[0].body, R"(power_monitor_gpu_power_watts{index="0",window="train"})"), 250.0);
  ASSERT_TRUE((*gauge)->end_window("train").has_value());
  EXPECT_EQ((*gauge)->end_window("train").error().code, ErrorCode::kNotFound);

  options.pushgateway_url = "http://127.0.0.1:1";  // nothing listens there
  auto unreachable = PowerGauge::create(devices_, options);
  ASSERT_TRUE(unreachable.has_value());
  auto begun = (*unreachable)->begin_window("x");
  ASSERT_FALSE(begun.has_value());
  EXPECT_EQ(begun.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(begun.error().message.find("127.0.0.1:1"), std::string::npos);
  options.gpu_indices = std::vector<int>{1};
  EXPECT_EQ(PowerGauge::create(devices_, options).error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace zeus
