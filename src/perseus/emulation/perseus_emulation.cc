// run_perseus_emulation: the paper's large-model emulation (Table 6, Fig. 7) from the bundled
// stage profiles (zeus/perseus/sim_perseus.h).
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/csv_table.h"
#include "sim/parallel.h"
#include "zeus/perseus/pfo_plan_choice.h"
#include "zeus/perseus/pfo_straggler_policy.h"
#include "zeus/perseus/sim_perseus.h"

namespace zeus::sim {
namespace {

constexpr int kStages = 8;          // pipeline parallel 8 (TP 8 x PP 8)
constexpr int kTensorParallel = 8;  // the published EnvPipe energies count every GPU of a stage
constexpr double kNotebookTimeScale = 10.0;

Result<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    return fail(ErrorCode::kNotFound,
                "cannot read " + path.string() +
                    " (pass --data with the folder that holds perseus/stage_profile/)");
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct GpuConstants {
  double p2p_power_w;
  double unit_s;
};

Result<GpuConstants> gpu_constants(const std::string& gpu, const PerseusEmulationOptions& options) {
  if (gpu == "a100_sxm") return GpuConstants{83.64, options.a100_unit_s};
  if (gpu == "a40") return GpuConstants{70.38, options.a40_unit_s};
  return fail(ErrorCode::kInvalidArgument,
              "unknown GPU '" + gpu + "' (the profiles are for a100_sxm and a40)");
}

// EnvPipe's published (time, energy) of one pipeline, unscaled; (0, 0) when not listed.
Result<std::map<std::tuple<std::string, std::string, int>, std::pair<double, double>>> load_envpipe(
    const std::filesystem::path& data_dir) {
  auto text = read_file(data_dir / "perseus" / "envpipe_result.csv");
  if (!text) return fail(text.error());
  auto table = CsvTable::parse(*text, "envpipe_result.csv");
  if (!table) return fail(table.error());
  auto cols =
      table->require_columns({"model", "device", "num_microbatches", "iteration_time", "energy"});
  if (!cols) return fail(cols.error());
  std::map<std::tuple<std::string, std::string, int>, std::pair<double, double>> out;
  for (std::size_t r = 0; r < table->num_rows(); ++r) {
    auto mb = table->number(r, (*cols)[2], "num_microbatches");
    auto time = table->number(r, (*cols)[3], "iteration_time");
    auto energy = table->number(r, (*cols)[4], "energy");
    if (!mb || !time || !energy)
      return fail(!mb ? mb.error() : !time ? time.error() : energy.error());
    out[{std::string(table->cell(r, (*cols)[0])), std::string(table->cell(r, (*cols)[1])),
         static_cast<int>(*mb)}] = {*time / kNotebookTimeScale,
                                    *energy / (kNotebookTimeScale * kTensorParallel)};
  }
  return out;
}

Result<PerseusConfigResult> evaluate(const pfo::StageProfile& profile, const std::string& model,
                                     const std::string& gpu, int microbatches,
                                     const PerseusEmulationOptions& options,
                                     const std::pair<double, double>& envpipe,
                                     const std::function<double()>& now_s) {
  auto constants = gpu_constants(gpu, options);
  if (!constants) return fail(constants.error());
  PerseusConfigResult out;
  out.model = model;
  out.gpu = gpu;
  out.num_microbatches = microbatches;
  out.num_pipelines = options.global_batch / microbatches;
  out.unit_s = constants->unit_s;
  out.p2p_power_w = constants->p2p_power_w;
  pfo::PlannerOptions planner;
  planner.num_stages = kStages;
  planner.num_microbatches = microbatches;
  planner.p2p_power_w = constants->p2p_power_w;
  planner.unit_time_s = constants->unit_s;
  planner.pareto = options.pareto;
  const double started = now_s ? now_s() : 0.0;
  auto frontier = pfo::plan_frontier(profile, planner);
  if (!frontier) return fail(frontier.error());
  out.plan_seconds = now_s ? now_s() - started : 0.0;
  const auto& points = frontier->points();
  if (points.empty()) {
    return fail(ErrorCode::kInvalidArgument, "the frontier of " + model + " on " + gpu +
                                                 " has no plans (every instruction has "
                                                 "one useful clock)");
  }
  const pfo::PlanCandidates candidates = pfo::plan_candidates(*frontier);
  const pfo::PlanChoice star = pfo::min_energy_plan(candidates);
  out.num_plans = points.size();
  out.frontier = points;
  out.t_max_s = static_cast<double>(frontier->max_quant_time()) * constants->unit_s;
  out.t_min_s = points.back().time_s;
  out.t_star_s = star.point.time_s;
  out.e_first_j = points.front().energy_j;
  out.e_min_time_j = points.back().energy_j;
  out.e_star_j = star.point.energy_j;
  out.baseline_energy_j = pfo::all_max_clock_energy_j(profile, frontier->schedule(),
                                                      constants->p2p_power_w, out.t_min_s);
  out.intrinsic_saving = 1.0 - out.e_min_time_j / out.baseline_energy_j;
  out.envpipe_time_s = envpipe.first;
  out.envpipe_energy_j = envpipe.second;
  const auto fastest = frontier->clocks_mhz(points.size() - 1);
  auto executed = execute_pipeline(profile, frontier->schedule(), fastest,
                                   {.p2p_power_w = constants->p2p_power_w});
  if (!executed) return fail(executed.error());
  out.executed_time_s = executed->iteration_time_s;
  out.executed_energy_j = executed->energy_j();
  out.fastest_run = *executed;
  auto quantised = execute_pipeline(
      profile, frontier->schedule(), fastest,
      {.p2p_power_w = constants->p2p_power_w, .quantised_unit_s = constants->unit_s});
  if (!quantised) return fail(quantised.error());
  out.executed_quantised_time_s = quantised->iteration_time_s;
  auto global = global_clock_runs(profile, frontier->schedule(), constants->p2p_power_w);
  if (!global) return fail(global.error());
  if (!global->empty()) out.baseline_run = global->back().run;  // the highest clock
  std::vector<pfo::GlobalClockPlan> clock_plans;
  for (const GlobalClockRun& run : *global) clock_plans.push_back(run.plan);

  for (double slowdown : options.slowdowns) {
    StragglerRow row;
    row.slowdown = slowdown;
    const double straggler_time = out.t_min_s * slowdown;
    pfo::StragglerScenario scenario{out.num_pipelines, kStages,     constants->p2p_power_w,
                                    slowdown,          out.t_min_s, out.baseline_energy_j};
    const double baseline =
        pfo::straggler_total_energy_j(scenario, out.t_min_s, out.baseline_energy_j);
    auto chosen = pfo::plan_for_straggler(candidates, straggler_time);
    if (!chosen) return fail(chosen.error());
    row.plan_time_s = chosen->point.time_s;
    pfo::StragglerScenario perseus = scenario;
    perseus.straggler_energy_j = out.e_min_time_j;  // the straggler runs Perseus's fastest plan
    row.perseus_saving =
        1.0 -
        pfo::straggler_total_energy_j(perseus, row.plan_time_s, chosen->point.energy_j) / baseline;
    if (out.envpipe_energy_j > 0.0) {
      pfo::StragglerScenario envpipe_case = scenario;
      envpipe_case.straggler_energy_j =
          out.envpipe_energy_j;  // EnvPipe cannot slow down: it blocks
      row.envpipe_saving =
          1.0 -
          pfo::straggler_total_energy_j(envpipe_case, out.t_min_s, out.envpipe_energy_j) / baseline;
    }
    double best = baseline;
    for (const GlobalClockRun& run : *global) {
      if (run.plan.time_s > straggler_time) continue;
      const double total =
          pfo::straggler_total_energy_j(scenario, run.plan.time_s, run.plan.energy_j);
      if (total < best) {
        best = total;
        row.global_clock_mhz = run.plan.clock_mhz;
      }
    }
    row.global_clock_saving = 1.0 - best / baseline;
    // The combined policy: the straggler keeps Perseus's fastest plan; every other pipeline runs
    // the cheaper at T' of Perseus's choice and the best global clock.
    auto combined = pfo::combined_straggler_plan(candidates, clock_plans,
                                                 {kStages, constants->p2p_power_w},
                                                 straggler_time);
    if (!combined) return fail(combined.error());
    row.combined_time_s = combined->time_s;
    row.combined_global_clock_mhz = combined->global_clock_mhz.value_or(0);
    row.combined_saving =
        1.0 - pfo::straggler_total_energy_j(perseus, combined->time_s, combined->energy_j) /
                  baseline;
    out.stragglers.push_back(row);
  }
  return out;
}

}  // namespace

Result<std::vector<GlobalClockRun>> global_clock_runs(
    const pfo::StageProfile& profile,
    const std::vector<std::vector<pfo::PipelineInstruction>>& schedule, double p2p_power_w) {
  // How many (stage, instruction) pairs of the schedule profiled each clock.
  std::set<std::pair<int, int>> operations;
  for (const auto& stage : schedule)
    for (const pfo::PipelineInstruction& inst : stage)
      operations.insert({inst.stage, static_cast<int>(inst.kind)});
  std::map<int, std::size_t> count;
  for (const pfo::ProfileRow& row : profile.rows) {
    if (operations.count({row.stage, static_cast<int>(row.instruction)}) > 0)
      ++count[row.frequency_mhz];
  }
  std::vector<GlobalClockRun> runs;
  for (const auto& [clock, n] : count) {
    if (n != operations.size()) continue;  // not profiled everywhere
    std::vector<std::vector<int>> clocks;
    for (const auto& stage : schedule) clocks.emplace_back(stage.size(), clock);
    auto run = execute_pipeline(profile, schedule, clocks, {.p2p_power_w = p2p_power_w});
    if (!run) return fail(run.error());
    runs.push_back({{clock, run->iteration_time_s, run->energy_j()}, *run});
  }
  return runs;
}

Result<PerseusEmulationResult> run_perseus_emulation(const PerseusEmulationOptions& options,
                                                     const std::function<double()>& now_s) {
  if (options.global_batch < 1)
    return fail(ErrorCode::kInvalidArgument, "the global batch must be >= 1");
  for (int mb : options.microbatches) {
    if (mb < 1 || mb > options.global_batch) {
      return fail(ErrorCode::kInvalidArgument, "--microbatches values must be between 1 and " +
                                                   std::to_string(options.global_batch) + ", got " +
                                                   std::to_string(mb));
    }
  }
  for (double s : options.slowdowns) {
    if (!(s >= 1.0 && s <= 10.0)) {
      return fail(ErrorCode::kInvalidArgument,
                  "--slowdowns are straggler factors T'/T in [1, 10], got " + std::to_string(s));
    }
  }
  auto envpipe = load_envpipe(options.data_dir);
  if (!envpipe) return fail(envpipe.error());
  // The profiles are read here, in order (the first unreadable one is the error); the
  // configurations are independent and are evaluated on every core, each into its own slot.
  struct Job {
    std::size_t profile;  // in `profiles`
    std::string model, gpu;
    int microbatches;
    std::pair<double, double> envpipe;
  };
  std::vector<pfo::StageProfile> profiles;
  std::vector<Job> jobs;
  for (const std::string& model : options.models) {
    for (const std::string& gpu : options.gpus) {
      ZEUS_TRY(gpu_constants(gpu, options));
      const std::string name = model + "+" + gpu + "_bf16";
      auto text = read_file(options.data_dir / "perseus" / "stage_profile" / (name + ".csv"));
      if (!text) return fail(text.error());
      auto profile = pfo::parse_stage_profile(*text, name + ".csv");
      if (!profile) return fail(profile.error());
      profiles.push_back(std::move(*profile));
      for (int mb : options.microbatches) {
        auto it = envpipe->find({model, gpu, mb});
        jobs.push_back({profiles.size() - 1, model, gpu, mb,
                        it == envpipe->end() ? std::pair{0.0, 0.0} : it->second});
      }
    }
  }
  std::vector<std::optional<Result<PerseusConfigResult>>> slots(jobs.size());
  const int total = static_cast<int>(jobs.size());
  parallel_for(
      total, 0,
      [&](int i) {
        const Job& job = jobs[static_cast<std::size_t>(i)];
        slots[static_cast<std::size_t>(i)] =
            evaluate(profiles[job.profile], job.model, job.gpu, job.microbatches, options,
                     job.envpipe, now_s);
      },
      options.progress, 0, total);
  PerseusEmulationResult result;
  for (auto& slot : slots) {
    Result<PerseusConfigResult>& config = *slot;
    if (!config) return fail(config.error());
    result.configs.push_back(std::move(*config));
  }
  return result;
}

}  // namespace zeus::sim
