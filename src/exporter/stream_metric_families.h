// The metric families of `zeus exporter --from`: many nodes' power and energy as streamed from
// their zeusd daemons (zeus/client/power_streaming_client.h), per node (label `node`: the address
// as
// given) and for the cluster. Names and labels are zeus/exporter/exporter.h's. Pure: no I/O.
// Thread-safety: stateless.
//
//   auto families = zeus::exporter::stream_metric_families(client->power());
#pragma once

#include <vector>

#include <prometheus/metric_family.h>

#include "zeus/client/power_streaming_client.h"

namespace zeus::exporter {

std::vector<prometheus::MetricFamily> stream_metric_families(const ClusterPower& cluster);

}  // namespace zeus::exporter
