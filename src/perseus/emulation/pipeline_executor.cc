// execute_pipeline: an event-driven replay of one 1F1B iteration (zeus/perseus/sim_perseus.h).
#include <map>
#include <queue>
#include <string>
#include <tuple>

#include "perseus/planner/python_float.h"
#include "zeus/perseus/sim_perseus.h"

namespace zeus::sim {
namespace {

using pfo::InstructionKind;

struct Event {
  double time_s;
  int stage;
  std::size_t index;  // the instruction of that stage that finished
  bool operator>(const Event& other) const {
    return std::tie(time_s, stage, index) > std::tie(other.time_s, other.stage, other.index);
  }
};

}  // namespace

Result<PipelineRun> execute_pipeline(
    const pfo::StageProfile& profile,
    const std::vector<std::vector<pfo::PipelineInstruction>>& schedule,
    const std::vector<std::vector<int>>& clocks_mhz, const ExecutorOptions& options) {
  if (clocks_mhz.size() != schedule.size()) {
    return fail(ErrorCode::kInvalidArgument, "the plan has " + std::to_string(clocks_mhz.size()) +
                                                 " stages but the schedule " +
                                                 std::to_string(schedule.size()));
  }
  const int num_stages = static_cast<int>(schedule.size());
  PipelineRun run;
  run.stages.resize(schedule.size());
  // Per instruction: its duration and energy at the planned clock.
  for (std::size_t s = 0; s < schedule.size(); ++s) {
    if (clocks_mhz[s].size() != schedule[s].size()) {
      return fail(ErrorCode::kInvalidArgument,
                  "stage " + std::to_string(s) + " of the plan has " +
                      std::to_string(clocks_mhz[s].size()) + " clocks for " +
                      std::to_string(schedule[s].size()) + " instructions");
    }
    for (std::size_t k = 0; k < schedule[s].size(); ++k) {
      const pfo::PipelineInstruction& inst = schedule[s][k];
      const pfo::ProfileRow* row = profile.find(inst.stage, inst.kind, clocks_mhz[s][k]);
      if (row == nullptr) {
        return fail(ErrorCode::kInvalidArgument, "stage " + std::to_string(inst.stage) + " " +
                                                     std::string(pfo::instruction_name(inst.kind)) +
                                                     " was not profiled at " +
                                                     std::to_string(clocks_mhz[s][k]) + " MHz");
      }
      InstructionRun out;
      out.instruction = inst;
      out.frequency_mhz = row->frequency_mhz;
      out.energy_j = row->energy_j;
      out.end_s = options.quantised_unit_s > 0.0
                      ? pfo::python_floordiv(row->time_s, options.quantised_unit_s) *
                            options.quantised_unit_s
                      : row->time_s;  // the duration until start is known
      run.stages[s].push_back(out);
    }
  }
  // Which instruction of the neighbour stage each one feeds: F(s, j) -> F(s+1, j), B(s, j) ->
  // B(s-1, j).
  std::map<std::tuple<int, int, int>, std::size_t> position;
  for (std::size_t s = 0; s < schedule.size(); ++s) {
    for (std::size_t k = 0; k < schedule[s].size(); ++k) {
      const auto& inst = schedule[s][k];
      position[{inst.stage, static_cast<int>(inst.kind), inst.microbatch}] = k;
    }
  }
  // Each instruction waits for its predecessor on the stage and, except at the pipeline's ends,
  // for its input from the neighbour: count what it still waits for and when the last arrived.
  std::vector<std::vector<int>> waiting(schedule.size());
  std::vector<std::vector<double>> ready_at(schedule.size());
  for (std::size_t s = 0; s < schedule.size(); ++s) {
    for (std::size_t k = 0; k < schedule[s].size(); ++k) {
      const auto& inst = schedule[s][k];
      const int from = inst.kind == InstructionKind::kForward ? inst.stage - 1 : inst.stage + 1;
      const bool has_input = from >= 0 && from < num_stages;
      waiting[s].push_back((k > 0 ? 1 : 0) + (has_input ? 1 : 0));
      ready_at[s].push_back(0.0);
    }
  }
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  auto start = [&](int s, std::size_t k) {
    InstructionRun& r = run.stages[static_cast<std::size_t>(s)][k];
    const double duration = r.end_s;
    r.start_s = ready_at[static_cast<std::size_t>(s)][k];
    r.end_s = r.start_s + duration;
    events.push({r.end_s, s, k});
  };
  auto arrive = [&](int s, std::size_t k, double time_s) {
    double& ready = ready_at[static_cast<std::size_t>(s)][k];
    ready = std::max(ready, time_s);
    if (--waiting[static_cast<std::size_t>(s)][k] == 0) start(s, k);
  };
  for (int s = 0; s < num_stages; ++s) {
    if (!schedule[static_cast<std::size_t>(s)].empty() &&
        waiting[static_cast<std::size_t>(s)][0] == 0)
      start(s, 0);
  }
  std::size_t finished = 0;
  while (!events.empty()) {
    const Event event = events.top();
    events.pop();
    ++finished;
    const auto& inst = schedule[static_cast<std::size_t>(event.stage)][event.index];
    if (event.index + 1 < schedule[static_cast<std::size_t>(event.stage)].size()) {
      arrive(event.stage, event.index + 1, event.time_s);
    }
    const int to = inst.kind == InstructionKind::kForward ? inst.stage + 1 : inst.stage - 1;
    if (to >= 0 && to < num_stages) {
      auto it = position.find({to, static_cast<int>(inst.kind), inst.microbatch});
      if (it != position.end()) arrive(to, it->second, event.time_s);
    }
    run.iteration_time_s = std::max(run.iteration_time_s, event.time_s);
  }
  std::size_t total = 0;
  for (const auto& stage : schedule) total += stage.size();
  ZEUS_CHECK(finished == total, "every instruction of a 1F1B schedule runs");
  for (const auto& stage : run.stages) {
    double busy = 0.0;
    for (const InstructionRun& r : stage) {
      run.compute_energy_j += r.energy_j;
      busy += r.end_s - r.start_s;
    }
    run.blocking_energy_j += options.p2p_power_w * (run.iteration_time_s - busy);
  }
  return run;
}

}  // namespace zeus::sim
