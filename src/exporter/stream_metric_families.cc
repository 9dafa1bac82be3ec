#include "exporter/stream_metric_families.h"

#include <string>

#include "exporter/client_metric.h"

namespace zeus::exporter {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

}  // namespace

std::vector<MetricFamily> stream_metric_families(const ClusterPower& cluster) {
  using M = MetricType;
  MetricFamily gpu_power{"zeus_node_gpu_power_watts",
                         "GPU power in watts, streamed from the node's zeusd",
                         M::Gauge,
                         {}};
  MetricFamily cpu_power{
      "zeus_node_cpu_power_watts",
      "CPU package or DRAM power in watts (RAPL), streamed from the node's zeusd",
      M::Gauge,
      {}};
  MetricFamily node_power{"zeus_node_power_watts",
                          "Power of the node's devices known now (GPUs, CPUs, DRAM) in watts",
                          M::Gauge,
                          {}};
  MetricFamily node_energy{
      "zeus_node_energy_joules_total",
      "Energy of the node's devices in joules since the exporter started streaming",
      M::Counter,
      {}};
  MetricFamily connected{
      "zeus_node_connected", "1 while every power stream of the node is up, else 0", M::Gauge, {}};
  MetricFamily reconnects{"zeus_node_reconnects_total",
                          "Reconnection attempts to the node's zeusd since the exporter started",
                          M::Counter,
                          {}};
  MetricFamily offset{"zeus_node_clock_offset_seconds",
                      "The exporter's clock minus the node's zeusd clock, in seconds",
                      M::Gauge,
                      {}};
  MetricFamily cluster_power{
      "zeus_cluster_power_watts", "Sum of zeus_node_power_watts over the nodes", M::Gauge, {}};
  MetricFamily cluster_energy{"zeus_cluster_energy_joules_total",
                              "Sum of zeus_node_energy_joules_total over the nodes",
                              M::Counter,
                              {}};
  for (const NodePower& node : cluster.nodes) {
    for (const auto& [gpu, watts] : node.gpu_power_w) {
      gpu_power.metric.push_back(
          client_metric({{"gpu", std::to_string(gpu)}, {"node", node.endpoint}}, watts, M::Gauge));
    }
    for (const auto& [package, watts] : node.cpu_power_w) {
      const std::string id = std::to_string(package);
      cpu_power.metric.push_back(client_metric(
          {{"node", node.endpoint}, {"package", id}, {"zone", "package"}}, watts.cpu_w, M::Gauge));
      if (watts.dram_w) {
        cpu_power.metric.push_back(client_metric(
            {{"node", node.endpoint}, {"package", id}, {"zone", "dram"}}, *watts.dram_w, M::Gauge));
      }
    }
    node_power.metric.push_back(client_metric({{"node", node.endpoint}}, node.power_w, M::Gauge));
    node_energy.metric.push_back(
        client_metric({{"node", node.endpoint}}, node.energy_j, M::Counter));
    connected.metric.push_back(
        client_metric({{"node", node.endpoint}}, node.connected ? 1.0 : 0.0, M::Gauge));
    reconnects.metric.push_back(
        client_metric({{"node", node.endpoint}}, static_cast<double>(node.reconnects), M::Counter));
    offset.metric.push_back(
        client_metric({{"node", node.endpoint}}, node.clock_offset_s, M::Gauge));
  }
  cluster_power.metric.push_back(client_metric({}, cluster.power_w, M::Gauge));
  cluster_energy.metric.push_back(client_metric({}, cluster.energy_j, M::Counter));
  std::vector<MetricFamily> families;
  for (auto* family : {&gpu_power, &cpu_power, &node_power, &node_energy, &connected, &reconnects,
                       &offset, &cluster_power, &cluster_energy}) {
    if (!family->metric.empty()) families.push_back(std::move(*family));
  }
  return families;
}

}  // namespace zeus::exporter
