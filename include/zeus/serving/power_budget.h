// The power budget: keeps the GPUs a proxy governs under one budget of watts with clocks first,
// spending the budget where the SLOs need it. Each control period every GPU's clock policy (the
// governor) proposes a clock; the budget predicts each GPU's power at every clock of the ladder
// for its load (the caller's prediction, e.g. the serving profile's), corrects the predictions
// by how measured power compared with predicted power (smoothed), and while the corrected total
// exceeds `margin` x the budget lowers one step of a GPU that is not prefilling, the one whose
// SLOs need its clock least (the most watts saved per second of work queued in it). Then it
// splits the budget into per-GPU power caps, the firmware's backstop within a period: an equal
// share each, except that a GPU predicted over its share gets what it draws, paid from the
// others' slack (never below what they draw); a budget the lowest clocks still exceed is said
// (`over`). Clocks first: a cap acting during decode never binds on an H200 while a clock still
// saves there.
// Pure: no I/O. Thread-safety: none. Failure: create() answers InvalidArgument for a budget not
// above 0 W or over 10^6 W, a margin outside (0, 1], or an empty or unordered ladder.
//
//   auto budget = PowerBudget::create(1680, ladder);
//   BudgetDecision d = budget->allocate(gpus, measured_total_w);   // d.clock_mhz[i]
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "zeus/common/result.h"

namespace zeus {

// One GPU as the budget sees it this period.
struct BudgetedGpu {
  double wanted_mhz = 0;           // the clock its policy proposes (one of the ladder's)
  std::vector<double> watts_at;    // predicted watts at each ladder clock (highest first)
  double need = 0;                 // how much its SLOs need its clock: work queued per
                                   // throughput (seconds of queue); 0 = idle
  // Prompts are queued in it: its clock is left as wanted (a lower one would stretch every
  // waiting request's TTFT for the whole period; its cap throttles only the iterations that
  // exceed it). Decode-only GPUs are the ones slowed: decode is memory-bound, a clock saves
  // power there and costs little TPOT.
  bool prefilling = false;
};

struct BudgetDecision {
  std::vector<double> clock_mhz;   // per GPU, at most its wanted clock
  std::vector<double> cap_w;       // per GPU, summing to the budget
  double predicted_w = 0;          // corrected, at those clocks
  bool over = false;               // every GPU at its lowest still exceeds the budget
  int lowered_steps = 0;           // ladder steps taken below the wanted clocks
};

class PowerBudget {
 public:
  static Result<std::unique_ptr<PowerBudget>> create(double budget_w,
                                                     std::vector<double> ladder_mhz,
                                                     double margin = 1.0);
  // measured_total_w: the GPUs' measured power over the last period (<= 0: none yet), compared
  // with what was predicted then to correct the predictions.
  BudgetDecision allocate(std::span<const BudgetedGpu> gpus, double measured_total_w);
  double budget_w() const { return budget_w_; }
  double correction() const { return correction_; }

 private:
  PowerBudget(double budget_w, std::vector<double> ladder_mhz, double margin);
  size_t index_of(double mhz) const;

  double budget_w_;
  std::vector<double> ladder_;
  double margin_;
  double correction_ = 1;     // measured / predicted, smoothed
  double last_predicted_ = 0; // uncorrected, at the clocks chosen last period
};

}  // namespace zeus
