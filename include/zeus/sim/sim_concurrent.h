// Concurrent submissions (paper §4.4, §6.3): recurrences of one job that overlap in time, so
// the batch-size optimizer must choose for a new submission before earlier ones have reported.
//
// Arrival process (the paper replayed the Alibaba GPU cluster trace, which is not bundled):
// submissions arrive as a Poisson process — exponential inter-arrival times drawn from the
// simulation seed — whose mean is D / overlap, where D is Default's expected recurrence time
// (b0 at the maximum limit) and `overlap` the offered load: the mean number of recurrences in
// flight if every one took D (overlap 1 ~ one at a time; 4 ~ four at once). A submission plans
// its run when it arrives (seeing only the runs that already ended) and, when a run misses the
// target, retries when that run ends. Zeus's decision core treats runs in flight as dispatched
// trials: during pruning a concurrent request gets the best batch size known so far; afterwards
// Thompson sampling draws, so concurrent submissions spread over the plausible batch sizes.
// Units: s, J. Deterministic in the options. Thread-safety: shares no state.
// Failure: the option and trace errors of simulate(); kInvalidArgument for an overlap <= 0.
//
//   auto result = zeus::sim::run_concurrent(options, {});   // overlaps 1, 2, 4, 8
//   if (result) std::cout << zeus::sim::format_concurrent_table(*result);
#pragma once

#include <string>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/sim/sim_experiments.h"

namespace zeus::sim {

struct ConcurrentCell {
  double overlap = 0.0;            // offered load (see above)
  Stat in_flight;                  // runs in flight when a Zeus run is planned, itself included
  Stat distinct_in_flight;         // distinct batch sizes among them
  Stat cum_energy_ratio, cum_time_ratio;  // Zeus / Default over all submissions
  Stat cum_regret_j;               // Zeus against the Oracle's expected cost
  Stat sequential_regret_j;        // Zeus one at a time (simulate()), same seeds, for reference
  Stat concurrent_pruning_answers;  // requests answered "best known" during pruning (per seed)
  Stat makespan_s;                 // first arrival to last completion, Zeus
};

struct ConcurrentWorkload {
  std::string name;
  int submissions = 0;
  double default_duration_s = 0.0;  // D
  std::vector<ConcurrentCell> cells;  // one per overlap
};

struct ConcurrentResult {
  std::string gpu;
  double eta = 0.0, beta = 0.0;
  int seeds = 0;
  std::vector<double> overlaps;
  std::vector<ConcurrentWorkload> workloads;
};

// overlaps empty: 1, 2, 4, 8. Submissions per workload: SimOptions::recurrences (0 = 2|B||P|).
Result<ConcurrentResult> run_concurrent(const ExperimentOptions& options, std::vector<double> overlaps);
std::string format_concurrent_table(const ConcurrentResult& result);

}  // namespace zeus::sim
