// The Frontier scheduler's measured-straggler detection (pure;
// perseus/server/scheduler_frontier.h).
// Pipelines are the data-parallel replicas (RankInfo::dp_rank). Per round, pipeline p's time
// m_p is the longest of its ranks' mean iteration times (ProfilingResult::iter_time).
//   - Calibration c (measured seconds per planned second) from the first measured round that ran
//     the fastest plan everywhere: c = median_p(m_p) / T_min.
//   - No straggler known, >= 2 pipelines: s = argmax m_p is a straggler when
//     m_s > (1 + tolerance) x the median of the other pipelines' m: relative, so a uniformly
//     slower job (or a plan-dependent calibration drift) is not a straggler. T' = m_s / c.
//     With one pipeline there is nothing to compare with: no measured straggler (only the
//     operator's route).
//   - Straggler s known: s keeps running the fastest plan, so m_s / c stays its T' (updated each
//     round); it clears when m_s / c < (1 + tolerance) x T_min. The other pipelines (on a slower
//     plan) are not compared with their plan's time meanwhile.
// Units: seconds. Thread-safety: plain values.
//
//   StragglerDetector d{0.05};
//   d.observe(pipeline_times(ranks, results, 2), t_min);  // per round
//   if (d.straggler()) serve(d.straggler()->pipeline, d.straggler()->time_s);
#pragma once

#include <optional>
#include <vector>

#include "common/median.h"
#include "zeus/perseus/pfo_runtime_types.h"

namespace zeus::pfo {

// m_p per pipeline 0..num_pipelines-1: the longest mean iteration time of its ranks that reported
// one; 0 for a pipeline none of whose ranks did (or for non-finite times).
std::vector<double> pipeline_times(const std::vector<RankInfo>& ranks,
                                   const std::vector<ProfilingResult>& results, int num_pipelines);

struct MeasuredStraggler {
  int pipeline = 0;
  double time_s = 0.0;  // T', in the plans' seconds
};

class StragglerDetector {
 public:
  explicit StragglerDetector(double tolerance = 0.05) : tolerance_(tolerance) {}

  // One round's pipeline times; `all_fastest`: every pipeline ran the fastest plan (only such a
  // round calibrates). Pipelines with m_p = 0 (unmeasured) are left out; a round with none
  // measured changes nothing.
  void observe(const std::vector<double>& times, double t_min_s, bool all_fastest);

  const std::optional<MeasuredStraggler>& straggler() const { return straggler_; }
  const std::optional<double>& calibration() const { return calibration_; }

 private:
  double tolerance_;
  std::optional<double> calibration_;
  std::optional<MeasuredStraggler> straggler_;
};

}  // namespace zeus::pfo
