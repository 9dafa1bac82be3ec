// Test helper: the bundled Perseus data (data/perseus/) read into memory.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "zeus/pfo_profile.h"

namespace zeus::pfo::testing {

inline std::string read_data_file(const std::string& relative) {
  std::ifstream in(std::string(ZEUS_SOURCE_DIR) + "/data/perseus/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline StageProfile load_profile(const std::string& name) {
  auto profile = parse_stage_profile(read_data_file("stage_profile/" + name + ".csv"), name);
  if (!profile) std::abort();
  return *profile;
}

// (time, energy) rows of a published frontier CSV.
inline std::vector<std::pair<double, double>> load_frontier(const std::string& relative) {
  std::istringstream in(read_data_file("frontier/" + relative));
  std::string line;
  std::getline(in, line);  // header
  std::vector<std::pair<double, double>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto comma = line.find(',');
    rows.emplace_back(std::stod(line.substr(0, comma)), std::stod(line.substr(comma + 1)));
  }
  return rows;
}

}  // namespace zeus::pfo::testing
