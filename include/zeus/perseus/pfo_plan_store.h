// The compact plan store: every plan of a Perseus frontier in one binary file, `plans.bin`
// (`zeus pfo plan --out DIR` writes DIR/plans.bin; the format: docs/perseus.md, "The plan store").
//
// Consecutive plans differ in a few instructions' clocks, so a plan is stored as the clock
// changes from the plan before it (4-byte instruction index, 2-byte MHz each), with every K-th
// plan (a checkpoint, K = 256 by default) also stored whole. Reading plan i reads its
// checkpoint and at most K - 1 change records: milliseconds on the largest frontiers, whose
// JSON lines took hundreds of MB. The file also holds what a server needs to choose a plan:
// each plan's time and energy, the T_max schedule (every instruction at its slowest clock), the
// instruction kinds per stage, the blocking power, and the global-clock alternatives
// (zeus/perseus/pfo_straggler_policy.h).
// open() reads the whole file (3.3 MB for a 65,844-plan frontier) and checks its tables; reading
// a plan is then memory work, no I/O.
// Units: seconds, joules, watts, MHz. Thread-safety: a PlanStore is immutable after open(); its
// const methods may be called from any thread; copies share the file's bytes.
// Failure: kNotFound for a missing file, kInvalidArgument for a file that is not a plan store
// (or is cut short), each naming the file and the fix (plan again with `zeus pfo plan`).
//
//   ZEUS_TRY(zeus::pfo::write_plan_store("plans/plans.bin", frontier, global_clocks));
//   auto store = zeus::pfo::PlanStore::open("plans/plans.bin");
//   auto clocks = store->clocks_mhz(store->points().size() - 1);   // the fastest plan
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/perseus/pfo_plan_choice.h"
#include "zeus/perseus/pfo_planner.h"
#include "zeus/perseus/pfo_straggler_policy.h"

namespace zeus::pfo {

inline constexpr uint32_t kDefaultPlanCheckpointInterval = 256;

// Writes `frontier` (and the global-clock alternatives) to `path`, replacing it.
// `checkpoint_interval` >= 1: every that many plans one is stored whole.
Result<void> write_plan_store(const std::filesystem::path& path, const Frontier& frontier,
                              std::span<const GlobalClockPlan> global_clocks,
                              uint32_t checkpoint_interval = kDefaultPlanCheckpointInterval);

class PlanStore {
 public:
  // Reads the file and checks its header, tables and offsets. Fails as the header comment says.
  static Result<PlanStore> open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  int num_stages() const { return static_cast<int>(kinds_.size()); }
  int num_microbatches() const { return num_microbatches_; }
  double unit_s() const { return unit_s_; }
  double p2p_power_w() const { return p2p_power_w_; }
  uint32_t checkpoint_interval() const { return checkpoint_interval_; }
  // Per stage, its instructions' kinds in execution order.
  const std::vector<std::vector<InstructionKind>>& kinds() const { return kinds_; }
  // The plans' times and energies, slowest first (quant_time, time_s and energy_j are set).
  const std::vector<FrontierPoint>& points() const { return points_; }
  const FrontierPoint& all_slowest() const { return all_slowest_; }
  const std::vector<GlobalClockPlan>& global_clocks() const { return global_clocks_; }
  // What plan choices pick among (valid while this store lives).
  PlanCandidates candidates() const { return {all_slowest_, points_}; }

  // The clocks (MHz) of plan `index`, per stage in execution order: its checkpoint and the
  // changes after it. kInvalidArgument for an index out of range or a damaged file.
  Result<std::vector<std::vector<int>>> clocks_mhz(std::size_t index) const;
  // The T_max schedule's clocks.
  const std::vector<std::vector<int>>& all_slowest_clocks_mhz() const {
    return all_slowest_clocks_;
  }
  // Calls fn(index, clocks) for every plan in order, reading the file once.
  Result<void> for_each_plan(
      const std::function<void(std::size_t, const std::vector<std::vector<int>>&)>& fn) const;

 private:
  PlanStore() = default;
  std::span<const char> range(uint64_t begin, uint64_t end) const;
  // Applies the change records in `bytes` (whole records) to `flat`.
  Result<void> apply_changes(std::span<const char> bytes, std::size_t records,
                             std::vector<int>& flat) const;
  std::vector<std::vector<int>> unflatten(const std::vector<int>& flat) const;

  std::filesystem::path path_;
  int num_microbatches_ = 0;
  double unit_s_ = 0.0;
  double p2p_power_w_ = 0.0;
  uint32_t checkpoint_interval_ = 1;
  std::size_t num_instructions_ = 0;
  std::shared_ptr<const std::vector<char>> bytes_;  // the whole file
  std::vector<std::vector<InstructionKind>> kinds_;
  std::vector<FrontierPoint> points_;
  FrontierPoint all_slowest_;
  std::vector<std::vector<int>> all_slowest_clocks_;
  std::vector<GlobalClockPlan> global_clocks_;
  std::vector<uint64_t> checkpoint_offsets_;  // one per checkpoint
  std::vector<uint64_t> change_offsets_;      // plan i's record: [i], [i + 1]
};

}  // namespace zeus::pfo
