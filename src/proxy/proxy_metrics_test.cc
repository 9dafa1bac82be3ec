// The proxy's Prometheus text: histograms by model, the meter's counters, per-GPU power, and the
// bound on distinct model labels.
#include "proxy/proxy_metrics.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <string>

#include "proxy/live_status.h"
#include "proxy/request_fields.h"

namespace zeus::proxy {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(ProxyMetricsTest, HistogramsByModelAndMeterCounters) {
  ProxyMetrics metrics;
  metrics.observe("a", 30, 100);  // 0.3 J/token
  metrics.observe("a", 4, 10);    // 0.4 J/token
  metrics.observe("", 1.5, 0);    // no token: no J/token observation
  const std::string text = metrics.render(ProxyStatus{.in_flight = 2,
                                                      .attributed_j = 35.5,
                                                      .idle_j = 14.5,
                                                      .measured_j = 50,
                                                      .gpu_indices = {0, 3},
                                                      .gpu_power_w = {120.5, 80}});
  EXPECT_TRUE(has_line(text, "zeus_proxy_request_energy_joules_count{model=\"a\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "zeus_proxy_request_energy_joules_sum{model=\"a\"} 34")) << text;
  EXPECT_TRUE(has_line(text, "zeus_proxy_request_energy_joules_bucket{model=\"a\",le=\"5\"} 1"));
  EXPECT_TRUE(has_line(text, "zeus_proxy_request_energy_joules_count{model=\"unknown\"} 1"));
  EXPECT_TRUE(has_line(text, "zeus_proxy_output_token_energy_joules_count{model=\"a\"} 2"));
  EXPECT_TRUE(has_line(text, "zeus_proxy_output_token_energy_joules_sum{model=\"a\"} 0.7"));
  EXPECT_EQ(text.find("zeus_proxy_output_token_energy_joules_count{model=\"unknown\"}"),
            std::string::npos);
  EXPECT_TRUE(has_line(text, "zeus_proxy_output_tokens_total{model=\"a\"} 110"));
  EXPECT_TRUE(has_line(text, "zeus_proxy_measured_energy_joules_total 50"));
  EXPECT_TRUE(has_line(text, "zeus_proxy_attributed_energy_joules_total 35.5"));
  EXPECT_TRUE(has_line(text, "zeus_proxy_idle_energy_joules_total 14.5"));
  EXPECT_TRUE(has_line(text, "zeus_proxy_requests_in_flight 2"));
  EXPECT_TRUE(has_line(text, "zeus_proxy_gpu_power_watts{gpu=\"0\"} 120.5"));
  EXPECT_TRUE(has_line(text, "zeus_proxy_gpu_power_watts{gpu=\"3\"} 80"));
  EXPECT_TRUE(has_line(text, "# TYPE zeus_proxy_idle_energy_joules_total counter"));
}

TEST(ProxyMetricsTest, GovernorSeriesOnlyWhenGoverning) {
  ProxyMetrics metrics;
  EXPECT_EQ(metrics.render(ProxyStatus{}).find("zeus_proxy_governor_"), std::string::npos);
  ProxyStatus status;
  status.governing = true;
  status.clock_mhz = 1380;
  status.max_clock_mhz = 1980;
  status.clock_changes = 7;
  status.slo_attainment = 0.995;
  status.slo_requests = 200;
  status.energy_saved_j = 1234.5;
  const std::string text = metrics.render(status);
  EXPECT_TRUE(has_line(text, "zeus_proxy_governor_clock_mhz 1380")) << text;
  EXPECT_TRUE(has_line(text, "zeus_proxy_governor_max_clock_mhz 1980"));
  EXPECT_TRUE(has_line(text, "zeus_proxy_governor_clock_changes_total 7"));
  EXPECT_TRUE(has_line(text, "zeus_proxy_governor_slo_attainment_ratio 0.995"));
  EXPECT_TRUE(has_line(text, "zeus_proxy_governor_slo_requests_total 200"));
  EXPECT_TRUE(has_line(text, "zeus_proxy_governor_energy_saved_joules_total 1234.5"));
}

TEST(ProxyMetricsTest, ModelNamesBeyondTheBoundCountAsOther) {
  ProxyMetrics metrics;
  for (size_t i = 0; i < ProxyMetrics::kMaxModels + 10; ++i) {
    metrics.observe("m" + std::to_string(i), 1, 1);
  }
  metrics.observe("m0", 1, 1);  // a known name keeps its label
  const std::string text = metrics.render({});
  EXPECT_TRUE(has_line(text, "zeus_proxy_request_energy_joules_count{model=\"other\"} 10"));
  EXPECT_TRUE(has_line(text, "zeus_proxy_request_energy_joules_count{model=\"m0\"} 2"));
  EXPECT_EQ(text.find("model=\"m64\""), std::string::npos);
}

TEST(LiveStatusTest, OneLineWithJoulesPerTokenAndWatts) {
  EXPECT_EQ(format_status(ProxyStatus{.requests = 120,
                                      .output_tokens = 4000,
                                      .in_flight = 3,
                                      .attributed_j = 860,
                                      .idle_j = 0,
                                      .measured_j = 1000,
                                      .gpu_indices = {0, 1},
                                      .gpu_power_w = {200, 112.4}}),
            "zeus proxy: 120 requests (3 in flight), 4000 tokens, 0.215 J/token, 312.4 W");
  EXPECT_EQ(format_status({}), "zeus proxy: 0 requests (0 in flight), 0 tokens, - J/token, 0.0 W");
}

TEST(LiveStatusTest, NothingIsDrawnWhenNotATerminal) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  int reads = 0;
  {
    LiveStatus line(
        [&] {
          ++reads;
          return ProxyStatus{};
        },
        fds[1], 0.01);
    EXPECT_FALSE(line.active());
  }
  close(fds[1]);
  char c;
  EXPECT_EQ(read(fds[0], &c, 1), 0);  // nothing written
  close(fds[0]);
  EXPECT_EQ(reads, 0);
}

// A model label's bytes are bounded (kMaxLabelBytes), not only the number
// of labels: 64 requests, each with its own 4 MB model name, make a /metrics text of kilobytes.
TEST(ProxyMetricsTest, ProxyBounds_ModelLabelsHaveBoundedBytes) {
  ProxyMetrics metrics;
  for (int i = 0; i < 70; ++i) {
    metrics.observe(std::to_string(i) + std::string(4 << 20, 'm'), 10, 10);
  }
  const std::string text = metrics.render(ProxyStatus{.gpu_indices = {0}, .gpu_power_w = {100}});
  EXPECT_LT(text.size(), 70u * 40 * (kMaxLabelBytes + 100)) << "bytes: " << text.size();
  EXPECT_NE(text.find("model=\"0mmm"), std::string::npos);
  EXPECT_NE(text.find("m...\""), std::string::npos);
}

}  // namespace
}  // namespace zeus::proxy
