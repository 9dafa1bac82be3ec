// Perseus evaluation: replaying pipeline frequency plans and reproducing the paper's emulation.
//
// execute_pipeline is an event-driven 1F1B executor: each instruction of each stage starts when
// its stage is free and its input has arrived (the forward from the previous stage, the
// backward from the next), takes the measured time and energy of its planned clock from the
// stage profile, and a stage that waits draws the P2P blocking power until the iteration ends.
// run_perseus_emulation plans the frontier for each (model, GPU, microbatch count) of the
// bundled stage profiles and computes, as the authors' notebook does:
//   - the intrinsic saving of the fastest plan against every instruction at the highest clock
//     with blocking power filling idle time (paper Table 6);
//   - with one straggler slowed to T' = s * T_min among 1536 / M data-parallel pipelines, the
//     total saving of every other pipeline switching to the least-energy plan within T' (Fig. 7),
//     against the same for EnvPipe (its published result) and the best single global SM clock,
//     and for the combined policy that takes the cheaper of Perseus's plan and a global clock;
//   - the executor's replay of the fastest plan against the planner's time and energy.
// Units: seconds, joules, watts, MHz. Thread-safety: pure functions of their inputs (the
// emulation reads its profiles from files once). Failure: Result errors naming the file or value.
//
//   auto run = zeus::sim::execute_pipeline(profile, frontier.schedule(),
//   frontier.clocks_mhz(i), 83.64); auto result = zeus::sim::run_perseus_emulation({.data_dir =
//   "data"});
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/perseus/pfo_planner.h"
#include "zeus/perseus/pfo_profile.h"
#include "zeus/perseus/pfo_straggler_policy.h"
#include "zeus/sim/sim_report.h"

namespace zeus::sim {

struct InstructionRun {
  pfo::PipelineInstruction instruction;
  int frequency_mhz = 0;
  double start_s = 0.0;
  double end_s = 0.0;
  double energy_j = 0.0;
};

struct PipelineRun {
  double iteration_time_s = 0.0;
  double compute_energy_j = 0.0;   // sum of the instructions' energies
  double blocking_energy_j = 0.0;  // P_b x idle time of every stage up to the iteration's end
  double energy_j() const { return compute_energy_j + blocking_energy_j; }
  std::vector<std::vector<InstructionRun>> stages;  // per stage, execution order
};

struct ExecutorOptions {
  double p2p_power_w = 0.0;
  // > 0: each instruction takes its clock's quantised time (q * unit) instead of the measured
  // one, the durations the planner reasons with.
  double quantised_unit_s = 0.0;
};

// Replays one iteration with `clocks_mhz` (per stage, execution order, as Frontier::clocks_mhz).
// kInvalidArgument when a clock was not profiled for its (stage, instruction) or shapes differ.
Result<PipelineRun> execute_pipeline(
    const pfo::StageProfile& profile,
    const std::vector<std::vector<pfo::PipelineInstruction>>& schedule,
    const std::vector<std::vector<int>>& clocks_mhz, const ExecutorOptions& options);

// Every instruction at one SM clock, replayed: the global-clock alternative to a plan.
struct GlobalClockRun {
  pfo::GlobalClockPlan plan;  // the clock, the replay's iteration time and energy
  PipelineRun run;
};

// One run per clock profiled for every (stage, instruction) of `schedule`, lowest clock first,
// each replayed by execute_pipeline with the measured times and energies and the blocking power
// filling idle time. The global-clock baseline of the emulation and the global-clock candidates
// of the combined straggler policy (zeus/perseus/pfo_straggler_policy.h, `zeus pfo plan`'s plan
// store).
Result<std::vector<GlobalClockRun>> global_clock_runs(
    const pfo::StageProfile& profile,
    const std::vector<std::vector<pfo::PipelineInstruction>>& schedule, double p2p_power_w);

struct PerseusEmulationOptions {
  std::filesystem::path data_dir;  // holds perseus/stage_profile/, envpipe_result.csv
  std::vector<std::string> models = {"gpt3-175b", "bloom"};
  std::vector<std::string> gpus = {"a100_sxm", "a40"};  // P_b 83.64 / 70.38 W; unit 1 ms / 0.1 ms
  std::vector<int> microbatches = {12, 24, 48, 96};
  std::vector<double> slowdowns = {1.05, 1.1, 1.2, 1.3, 1.4, 1.5};  // T' / T_min
  int global_batch = 1536;  // pipelines = global_batch / microbatches
  double a40_unit_s = 0.0001;
  double a100_unit_s = 0.001;
  // The planner's Pareto filter (kMeasured reproduces the published numbers).
  pfo::ParetoEnergy pareto = pfo::ParetoEnergy::kMeasured;
  // The configurations are evaluated on every core; this is called on the caller's thread as
  // they finish: (done, total).
  std::function<void(int, int)> progress;
};

struct StragglerRow {
  double slowdown = 1.0;        // T' / T_min
  double plan_time_s = 0.0;     // the chosen plan of the other pipelines
  double perseus_saving = 0.0;  // fractions of the all-max-clock total
  double envpipe_saving = 0.0;
  double global_clock_saving = 0.0;
  int global_clock_mhz = 0;  // the best single clock within T'
  // The combined policy (zeus/perseus/pfo_straggler_policy.h): the cheaper at T' of Perseus's plan
  // and
  // the best global clock; never below either saving.
  double combined_saving = 0.0;
  double combined_time_s = 0.0;
  int combined_global_clock_mhz = 0;  // 0 when the frontier plan won
};

struct PerseusConfigResult {
  std::string model, gpu;
  int num_microbatches = 0;
  int num_pipelines = 0;
  double unit_s = 0.0;
  double p2p_power_w = 0.0;
  std::size_t num_plans = 0;
  double plan_seconds = 0.0;  // wall time of planning (from the caller's clock; 0 when unset)
  double t_max_s = 0.0, t_min_s = 0.0, t_star_s = 0.0;
  double e_first_j = 0.0, e_min_time_j = 0.0,
         e_star_j = 0.0;           // energies of the slowest plan, T_min, T*
  double baseline_energy_j = 0.0;  // every instruction at the highest clock, at T_min
  double intrinsic_saving = 0.0;   // 1 - E(T_min) / baseline (Table 6)
  double envpipe_time_s = 0.0, envpipe_energy_j = 0.0;  // per pipeline, unscaled
  // The fastest plan replayed with measured times and energies, and its difference to the planner.
  double executed_time_s = 0.0, executed_energy_j = 0.0;
  double executed_quantised_time_s = 0.0;  // replay with quantised times: never above t_min_s
  std::vector<StragglerRow> stragglers;
  std::vector<pfo::FrontierPoint> frontier;
  PipelineRun baseline_run;  // every instruction at the highest clock, replayed
  PipelineRun fastest_run;   // the fastest plan, replayed
};

struct PerseusEmulationResult {
  std::vector<PerseusConfigResult> configs;
};

// Plans and evaluates every configuration. `now_s` (optional) times the planning.
Result<PerseusEmulationResult> run_perseus_emulation(const PerseusEmulationOptions& options,
                                                     const std::function<double()>& now_s = {});

// The tables as text (stdout of `zeus simulate perseus`).
std::string format_perseus_table(const PerseusEmulationResult& result);
// The report: frontier plots, before/after pipeline timelines, savings tables, CSV data.
Result<std::filesystem::path> write_perseus_report(const PerseusEmulationResult& result,
                                                   const PerseusEmulationOptions& options,
                                                   const std::filesystem::path& dir,
                                                   const ReportOptions& report);

}  // namespace zeus::sim
