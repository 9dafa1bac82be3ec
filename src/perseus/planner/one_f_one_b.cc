#include "zeus/perseus/pfo_planner.h"

namespace zeus::pfo {
namespace {

// Python's // for integers (floor toward minus infinity).
int floor_div2(int x) { return x >= 0 ? x / 2 : -((-x + 1) / 2); }

}  // namespace

std::vector<PipelineInstruction> one_f_one_b_order(int num_stages, int num_microbatches,
                                                   int stage) {
  std::vector<PipelineInstruction> order;
  const int total_steps = 2 * (num_microbatches + num_stages - 1);
  for (int step = 0; step < total_steps; ++step) {
    const bool even_step = step % 2 == 0;
    const bool even_stage = stage % 2 == 0;
    // An even stage runs forwards on even steps, an odd stage on odd steps.
    const bool forward = even_step == even_stage;
    int microbatch = 0;
    if (forward) {
      microbatch = (even_step ? floor_div2(step) : floor_div2(step - 1)) - stage / 2;
    } else if (even_step) {
      microbatch = floor_div2(step) - num_stages + (stage + 1) / 2;
    } else {
      microbatch = floor_div2(step - 1) - num_stages + 1 + stage / 2;
    }
    if (microbatch < 0 || microbatch >= num_microbatches) continue;
    order.push_back(
        {stage, forward ? InstructionKind::kForward : InstructionKind::kBackward, microbatch});
  }
  return order;
}

}  // namespace zeus::pfo
