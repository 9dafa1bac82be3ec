// The energy counters of some GPUs, summed (J): what the proxy's ledger reads. GPUs without an
// energy counter (before Volta) are refused for now.
// Thread-safety: read() from one thread at a time (the proxy calls it under its mutex).
#pragma once

#include <memory>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/device/device.h"

namespace zeus::proxy {

class GpuEnergyReader {
 public:
  // `indices` empty: every GPU of `devices`. NotFound for an unknown index, NotSupported for a GPU
  // without an energy counter.
  static Result<GpuEnergyReader> create(Devices& devices, const std::vector<int>& indices);
  // Each GPU's counter now (J), in the order of `indices()`.
  Result<std::vector<double>> read_each_j();
  size_t gpus() const { return gpus_.size(); }
  const std::vector<int>& indices() const { return indices_; }

 private:
  std::vector<Gpu*> gpus_;
  std::vector<int> indices_;
};

}  // namespace zeus::proxy
