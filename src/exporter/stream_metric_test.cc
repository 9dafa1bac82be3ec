// stream_metric_families: the nodes of a ClusterPower as Prometheus series (zeus exporter --from).
#include <prometheus/text_serializer.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "exporter/stream_metric_families.h"

namespace zeus::exporter {
namespace {

ClusterPower two_nodes() {
  ClusterPower cluster;
  NodePower up;
  up.endpoint = "10.0.0.1:4938";
  up.connected = true;
  up.gpu_power_w = {{0, 300.0}, {1, 250.5}};
  up.cpu_power_w[0] = {80.0, 12.5};
  up.cpu_power_w[1] = {70.0, std::nullopt};
  up.power_w = 300.0 + 250.5 + 80.0 + 12.5 + 70.0;
  up.energy_j = 1000.0;
  up.reconnects = 2;
  up.clock_offset_s = 0.25;
  NodePower down;
  down.endpoint = "unix:/run/zeusd.sock";
  down.energy_j = 40.0;  // streamed before it went down; its devices are unknown now
  cluster.nodes = {up, down};
  cluster.power_w = up.power_w;
  cluster.energy_j = 1040.0;
  return cluster;
}

TEST(StreamMetricFamilies, PerNodeAndClusterSeriesWithTypesAndLabels) {
  const std::string text =
      prometheus::TextSerializer().Serialize(stream_metric_families(two_nodes()));
  for (const std::string& line : std::vector<std::string>{
           "# TYPE zeus_node_gpu_power_watts gauge",
           "zeus_node_gpu_power_watts{gpu=\"0\",node=\"10.0.0.1:4938\"} 300",
           "zeus_node_gpu_power_watts{gpu=\"1\",node=\"10.0.0.1:4938\"} 250.5",
           "zeus_node_cpu_power_watts{node=\"10.0.0.1:4938\",package=\"0\",zone=\"package\"} 80",
           "zeus_node_cpu_power_watts{node=\"10.0.0.1:4938\",package=\"0\",zone=\"dram\"} 12.5",
           "zeus_node_cpu_power_watts{node=\"10.0.0.1:4938\",package=\"1\",zone=\"package\"} 70",
           "zeus_node_power_watts{node=\"10.0.0.1:4938\"} 713",
           "zeus_node_power_watts{node=\"unix:/run/zeusd.sock\"} 0",
           "# TYPE zeus_node_energy_joules_total counter",
           "zeus_node_energy_joules_total{node=\"10.0.0.1:4938\"} 1000",
           "zeus_node_energy_joules_total{node=\"unix:/run/zeusd.sock\"} 40",
           "zeus_node_connected{node=\"10.0.0.1:4938\"} 1",
           "zeus_node_connected{node=\"unix:/run/zeusd.sock\"} 0",
           "# TYPE zeus_node_reconnects_total counter",
           "zeus_node_reconnects_total{node=\"10.0.0.1:4938\"} 2",
           "zeus_node_clock_offset_seconds{node=\"10.0.0.1:4938\"} 0.25",
           "# TYPE zeus_cluster_power_watts gauge",
           "zeus_cluster_power_watts 713",
           "# TYPE zeus_cluster_energy_joules_total counter",
           "zeus_cluster_energy_joules_total 1040",
       }) {
    EXPECT_NE(text.find(line + "\n"), std::string::npos) << line << "\nin:\n" << text;
  }
  // No DRAM series for a package without one, no device series for a node that is down.
  EXPECT_EQ(text.find("package=\"1\",zone=\"dram\""), std::string::npos) << text;
  EXPECT_EQ(text.find("gpu_power_watts{gpu=\"0\",node=\"unix:"), std::string::npos) << text;
}

TEST(StreamMetricFamilies, NoNodesStillGivesTheClusterSums) {
  const auto families = stream_metric_families(ClusterPower{});
  ASSERT_EQ(families.size(), 2u);
  EXPECT_EQ(families[0].name, "zeus_cluster_power_watts");
  EXPECT_EQ(families[1].name, "zeus_cluster_energy_joules_total");
}

}  // namespace
}  // namespace zeus::exporter
