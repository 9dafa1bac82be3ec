// The exporter's metric families, built from one EnergySnapshot (see zeus/exporter/exporter.h for
// the
// names and labels). Pure: no I/O. Thread-safety: stateless.
//
//   auto families = zeus::exporter::metric_families(*sampler.latest());
//   std::string text = prometheus::TextSerializer().Serialize(families);
#pragma once

#include <vector>

#include <prometheus/metric_family.h>

#include "zeus/exporter/exporter.h"

namespace zeus::exporter {

std::vector<prometheus::MetricFamily> metric_families(const EnergySnapshot& snapshot);

}  // namespace zeus::exporter
