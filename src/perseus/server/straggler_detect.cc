// Measured-straggler detection (perseus/server/straggler_detect.h).
#include "perseus/server/straggler_detect.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace zeus::pfo {

std::vector<double> pipeline_times(const std::vector<RankInfo>& ranks,
                                   const std::vector<ProfilingResult>& results, int num_pipelines) {
  std::vector<double> out(static_cast<std::size_t>(std::max(num_pipelines, 0)), 0.0);
  for (const ProfilingResult& r : results) {
    if (r.iter_time.empty()) continue;
    const auto rank = std::find_if(ranks.begin(), ranks.end(),
                                   [&](const RankInfo& info) { return info.rank == r.rank; });
    if (rank == ranks.end() || rank->dp_rank < 0 || rank->dp_rank >= num_pipelines) continue;
    const double mean = std::accumulate(r.iter_time.begin(), r.iter_time.end(), 0.0) /
                        static_cast<double>(r.iter_time.size());
    if (!(mean > 0.0) || !std::isfinite(mean)) continue;
    double& m = out[static_cast<std::size_t>(rank->dp_rank)];
    m = std::max(m, mean);
  }
  return out;
}

void StragglerDetector::observe(const std::vector<double>& times, double t_min_s,
                                bool all_fastest) {
  std::vector<double> measured;
  for (double m : times)
    if (m > 0.0) measured.push_back(m);
  if (measured.empty() || !(t_min_s > 0.0)) return;
  if (!calibration_) {
    if (all_fastest) calibration_ = median(measured) / t_min_s;
    return;
  }
  if (straggler_) {
    const double m_s = times.size() > static_cast<std::size_t>(straggler_->pipeline)
                           ? times[static_cast<std::size_t>(straggler_->pipeline)]
                           : 0.0;
    if (!(m_s > 0.0)) return;  // the straggler reported nothing: keep what is known
    const double t_prime = m_s / *calibration_;
    if (t_prime < (1.0 + tolerance_) * t_min_s) {
      straggler_.reset();
    } else {
      straggler_->time_s = t_prime;
    }
    return;
  }
  if (measured.size() < 2) return;  // nothing to compare with
  const auto slowest = std::max_element(times.begin(), times.end());
  std::vector<double> others;
  for (std::size_t p = 0; p < times.size(); ++p)
    if (times[p] > 0.0 && static_cast<long>(p) != slowest - times.begin()) others.push_back(times[p]);
  if (*slowest > (1.0 + tolerance_) * median(others)) {
    straggler_ = MeasuredStraggler{static_cast<int>(slowest - times.begin()),
                                   *slowest / *calibration_};
  }
}

}  // namespace zeus::pfo
