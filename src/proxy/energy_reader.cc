#include "proxy/energy_reader.h"

#include <set>

namespace zeus::proxy {

Result<GpuEnergyReader> GpuEnergyReader::create(Devices& devices, const std::vector<int>& indices) {
  GpuEnergyReader reader;
  std::vector<int> chosen = indices;
  if (chosen.empty()) {
    for (size_t i = 0; i < devices.gpus.size(); ++i) chosen.push_back(static_cast<int>(i));
  }
  if (chosen.empty()) return fail(ErrorCode::kNotFound, "no GPU to measure");
  std::set<int> seen;
  for (int index : chosen) {
    // Listed twice, a GPU's energy would count twice, and two clock controllers would drive it.
    if (!seen.insert(index).second) {
      return fail(ErrorCode::kInvalidArgument,
                  "GPU index " + std::to_string(index) + " is listed twice in --gpus");
    }
    if (index < 0 || static_cast<size_t>(index) >= devices.gpus.size()) {
      return fail(ErrorCode::kNotFound, "no GPU " + std::to_string(index) + " (there are " +
                                            std::to_string(devices.gpus.size()) + ")");
    }
    Gpu* gpu = devices.gpus[static_cast<size_t>(index)].get();
    if (!gpu->has_energy_counter()) {
      return fail(ErrorCode::kNotSupported,
                  "GPU " + std::to_string(index) +
                      " has no energy counter (before Volta); the proxy needs one");
    }
    reader.gpus_.push_back(gpu);
    reader.indices_.push_back(index);
  }
  return reader;
}

Result<std::vector<double>> GpuEnergyReader::read_each_j() {
  std::vector<double> each_j;
  for (Gpu* gpu : gpus_) {
    Result<uint64_t> mj = gpu->total_energy_mj();
    if (!mj) return fail(mj.error());
    each_j.push_back(static_cast<double>(*mj) / 1000.0);
  }
  return each_j;
}

}  // namespace zeus::proxy
