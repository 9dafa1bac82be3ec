// Parsing of CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES into physical GPU indices.
#include <set>
#include <string>
#include <vector>

#include "zeus/device/device.h"

namespace zeus {
namespace {

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const auto end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

}  // namespace

Result<std::vector<int>> parse_visible_devices(const std::string& value,
                                               const std::string& variable,
                                               const std::vector<std::string>& uuids) {
  std::vector<int> indices;
  if (trim(value).empty()) return indices;  // set but empty: no GPU visible
  std::set<int> seen;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string::npos) comma = value.size();
    const std::string item = trim(value.substr(start, comma - start));
    start = comma + 1;
    if (item.rfind("MIG", 0) == 0) {
      return fail(ErrorCode::kInvalidArgument, variable + "=" + value + " names a MIG instance ('" +
                                                   item +
                                                   "'); NVML cannot measure MIG slices: unset " +
                                                   variable + " or list whole GPUs");
    }
    int index = -1;
    if (item.rfind("GPU-", 0) == 0) {
      // A whole UUID, or a prefix that names exactly one GPU (an ambiguous prefix must not
      // silently pick one of the candidates).
      std::vector<int> matches;
      for (size_t i = 0; i < uuids.size(); ++i) {
        if (uuids[i] == item) {
          matches.assign(1, static_cast<int>(i));
          break;
        }
        if (uuids[i].rfind(item, 0) == 0) matches.push_back(static_cast<int>(i));
      }
      if (matches.size() > 1) {
        std::string candidates;
        for (int m : matches)
          candidates += (candidates.empty() ? "" : ", ") + uuids[static_cast<size_t>(m)];
        return fail(ErrorCode::kInvalidArgument,
                    variable + "=" + value + ": the UUID prefix '" + item + "' matches " +
                        std::to_string(matches.size()) + " GPUs (" + candidates +
                        "); give enough of the UUID to name one");
      }
      if (!matches.empty()) index = matches.front();
      if (index < 0) {
        return fail(ErrorCode::kNotFound, variable + "=" + value + ": no GPU has the UUID '" +
                                              item + "' (zeus devices lists the UUIDs)");
      }
    } else if (item == "NoDevFiles" ||
               (item.size() > 1 && item[0] == '-' &&
                item.find_first_not_of("0123456789", 1) == std::string::npos)) {
      // CUDA ends the list at an invalid index: "-1" (and Slurm's "NoDevFiles") mean "no more
      // GPUs", the usual way to hide every GPU from a CPU-only job.
      break;
    } else {
      if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos ||
          item.size() > 6) {
        return fail(ErrorCode::kInvalidArgument,
                    variable + "='" + value +
                        "' is malformed: expected a comma-separated list "
                        "of GPU indices such as 0,1 (item '" +
                        item + "')");
      }
      index = std::stoi(item);
    }
    if (!seen.insert(index).second) {
      return fail(ErrorCode::kInvalidArgument,
                  variable + "=" + value + " lists GPU " + item + " twice");
    }
    indices.push_back(index);
  }
  return indices;
}

}  // namespace zeus
