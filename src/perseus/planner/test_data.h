// Test helper: the bundled Perseus data (data/perseus/) read into memory.
#pragma once

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "zeus/perseus/pfo_profile.h"

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

// A hand-checkable profile: 2 stages, forward and backward alike, clocks 1410..1000 MHz taking
// q = 10..14 units of 1 ms (plus 0.1 us, so that time // unit is q), effective energy exactly
// e'(q) = 100 exp(-0.3 (q - 10)) + 50 J at blocking power kTinyBlockingW.
inline constexpr double kTinyBlockingW = 10.0;
inline double tiny_effective_energy_j(int q) { return 100.0 * std::exp(-0.3 * (q - 10)) + 50.0; }
inline StageProfile tiny_profile() {
  const std::pair<int, int> clocks[] = {{10, 1410}, {11, 1300}, {12, 1200}, {13, 1100}, {14, 1000}};
  StageProfile profile;
  for (int stage = 0; stage < 2; ++stage) {
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      for (const auto& [q, mhz] : clocks) {
        const double time_s = q * 0.001 + 1e-7;
        profile.rows.push_back(
            {stage, kind, mhz, time_s, tiny_effective_energy_j(q) + kTinyBlockingW * time_s});
      }
    }
  }
  return profile;
}

}  // namespace zeus::pfo::testing
