// The Frontier scheduler (perseus/server/scheduler_frontier.h).
#include "perseus/server/scheduler_frontier.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "common/strict_json.h"
#include "perseus/server/straggler_detect.h"

#include "zeus/perseus/pfo_straggler_policy.h"

namespace zeus::pfo {
namespace {

using nlohmann::json;

std::string seconds(double s) {
  char text[64];  // a huge time in %g: "%.4f" of 1e300 needs 300 characters
  std::snprintf(text, sizeof(text), std::fabs(s) < 1e6 ? "%.4f s" : "%.4g s", s);
  return text;
}

class FrontierScheduler final : public FrequencyScheduler, public StragglerAware {
 public:
  FrontierScheduler(std::vector<RankInfo> ranks, std::shared_ptr<const PlanStore> store,
                    FrontierSchedulerOptions options)
      : ranks_(std::move(ranks)),
        store_(std::move(store)),
        detector_(options.straggler_tolerance) {
    for (const RankInfo& rank : ranks_) num_pipelines_ = std::max(num_pipelines_, rank.dp_rank + 1);
    const PlanChoice fastest = fastest_plan(store_->candidates());
    fastest_plan_ = fastest.plan;
    t_min_s_ = fastest.point.time_s;
  }

  Result<std::vector<FrequencySchedule>> next_schedule() override {
    std::optional<double> straggler_s;
    std::optional<int> pipeline;
    if (operator_time_s_) {
      straggler_s = operator_time_s_;
      pipeline = operator_pipeline_;
    } else if (const auto& measured = detector_.straggler()) {
      straggler_s = measured->time_s;
      pipeline = measured->pipeline;
    }
    Result<std::vector<std::vector<int>>> clocks = choose(straggler_s, pipeline);
    if (!clocks) return fail(clocks.error());
    std::vector<std::vector<int>> fastest;
    if (pipeline) {
      Result<std::vector<std::vector<int>>> f = plan_clocks(fastest_plan_);
      if (!f) return fail(f.error());
      fastest = std::move(*f);
    }
    std::vector<FrequencySchedule> out;
    for (const RankInfo& rank : ranks_) {
      FrequencySchedule schedule{rank.rank, {}};
      const auto& kinds = store_->kinds()[static_cast<std::size_t>(rank.pp_rank)];
      const auto& stage = (pipeline && rank.dp_rank == *pipeline ? fastest : *clocks)
          [static_cast<std::size_t>(rank.pp_rank)];
      for (std::size_t k = 0; k < kinds.size(); ++k)
        schedule.frequencies.emplace_back(instruction_name(kinds[k]), stage[k]);
      out.push_back(std::move(schedule));
    }
    served_all_fastest_ = !straggler_s;
    served_by_operator_ = operator_time_s_.has_value();
    return out;
  }

  Result<void> observe(const std::vector<ProfilingResult>& results) override {
    if (served_by_operator_) return ok();  // the operator's plans: nothing to measure from
    detector_.observe(pipeline_times(ranks_, results, num_pipelines_), t_min_s_,
                      served_all_fastest_);
    return ok();
  }

  std::string straggler_state() const override { return state_; }

  Result<void> set_straggler_time(std::optional<double> iteration_time_s,
                                  std::optional<int> pipeline) override {
    if (iteration_time_s && !(*iteration_time_s > 0.0 && std::isfinite(*iteration_time_s))) {
      return fail(ErrorCode::kInvalidArgument,
                  "iteration_time_s must be a positive number of seconds (the straggler's "
                  "iteration time, in the plans' seconds)");
    }
    if (pipeline && (*pipeline < 0 || *pipeline >= num_pipelines_)) {
      return fail(ErrorCode::kInvalidArgument, "pipeline " + std::to_string(*pipeline) +
                                                   " is not one of the job's " +
                                                   std::to_string(num_pipelines_) +
                                                   " pipelines (dp ranks)");
    }
    operator_time_s_ = iteration_time_s;
    operator_pipeline_ = iteration_time_s ? pipeline : std::nullopt;
    return ok();
  }

 private:
  Result<std::vector<std::vector<int>>> plan_clocks(std::optional<std::size_t> plan) {
    if (!plan) return store_->all_slowest_clocks_mhz();
    if (cached_plan_ != plan) {  // rounds often repeat a plan: decode it once
      Result<std::vector<std::vector<int>>> clocks = store_->clocks_mhz(*plan);
      if (!clocks) return fail(clocks.error());
      cached_clocks_ = std::move(*clocks);
      cached_plan_ = plan;
    }
    return cached_clocks_;
  }

  // The clocks per stage for the non-straggler pipelines, for a straggler at `straggler_s`
  // (none: the fastest plan); sets state_.
  Result<std::vector<std::vector<int>>> choose(std::optional<double> straggler_s,
                                               std::optional<int> pipeline) {
    std::optional<std::size_t> plan;
    std::optional<int> global_clock;
    double served_s = t_min_s_;
    if (!straggler_s) {
      plan = fastest_plan_;
    } else {
      Result<CombinedChoice> choice =
          combined_straggler_plan(store_->candidates(), store_->global_clocks(),
                                  {store_->num_stages(), store_->p2p_power_w()}, *straggler_s);
      if (!choice) return fail(choice.error());
      plan = choice->frontier.plan;
      global_clock = choice->global_clock_mhz;
      served_s = choice->time_s;
    }
    const std::string what = global_clock ? "global clock " + std::to_string(*global_clock) + " MHz"
                             : plan       ? "plan " + std::to_string(*plan)
                                          : std::string("the T_max schedule");
    const std::string who = std::string(operator_time_s_ ? "operator" : "measured") +
                            (pipeline ? ", pipeline " + std::to_string(*pipeline) : "");
    state_ = (straggler_s ? "straggler at " + seconds(*straggler_s) + " (" + who + "): "
                          : std::string("no straggler: fastest ")) +
             what + " (" + seconds(served_s) + ")" +
             (pipeline ? "; pipeline " + std::to_string(*pipeline) + ": the fastest plan" : "");
    if (global_clock) {
      std::vector<std::vector<int>> clocks;
      for (const auto& kinds : store_->kinds()) clocks.emplace_back(kinds.size(), *global_clock);
      return clocks;
    }
    return plan_clocks(plan);
  }

  std::vector<RankInfo> ranks_;
  std::shared_ptr<const PlanStore> store_;
  StragglerDetector detector_;
  int num_pipelines_ = 0;
  std::optional<std::size_t> fastest_plan_;
  double t_min_s_ = 0.0;
  std::optional<double> operator_time_s_;
  std::optional<int> operator_pipeline_;
  bool served_all_fastest_ = true;  // the round last handed out ran the fastest plan everywhere
  bool served_by_operator_ = false;
  std::string state_ = "no round yet";
  std::optional<std::size_t> cached_plan_;
  std::vector<std::vector<int>> cached_clocks_;
};

constexpr std::array kFrontierArgs = {"straggler_tolerance"};

}  // namespace

Result<std::unique_ptr<FrequencyScheduler>> make_frontier_scheduler(
    const JobInfo& job, const std::vector<RankInfo>& ranks, std::shared_ptr<const PlanStore> store,
    FrontierSchedulerOptions options) {
  if (job.pp_degree != store->num_stages()) {
    return fail(ErrorCode::kInvalidArgument, "the plans in " + store->path().string() +
                                                 " are for " + std::to_string(store->num_stages()) +
                                                 " pipeline stages but the job has pp " +
                                                 std::to_string(job.pp_degree) +
                                                 "; plan for this pipeline with `zeus pfo "
                                                 "plan --stages " +
                                                 std::to_string(job.pp_degree) + "`");
  }
  for (const RankInfo& rank : ranks) {
    if (rank.pp_rank < 0 || rank.pp_rank >= store->num_stages()) {
      return fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(rank.rank) +
                                                   " has pp_rank " + std::to_string(rank.pp_rank) +
                                                   ", outside the plans' " +
                                                   std::to_string(store->num_stages()) + " stages");
    }
  }
  if (store->points().empty()) {
    return fail(ErrorCode::kInvalidArgument,
                store->path().string() + " holds no plans; plan again with `zeus pfo plan`");
  }
  return std::unique_ptr<FrequencyScheduler>(
      std::make_unique<FrontierScheduler>(ranks, std::move(store), options));
}

Result<FrontierSchedulerOptions> parse_frontier_args(std::string_view args_json) {
  FrontierSchedulerOptions o;
  if (args_json.empty()) return o;
  Result<json> args = parse_strict_json_object(args_json);
  if (!args) {
    return fail(ErrorCode::kInvalidArgument,
                "the Frontier arguments: " + args.error().message +
                    " (a JSON object such as {\"straggler_tolerance\": 0.1}; the plans: --plans DIR)");
  }
  Result<void> known = check_known_fields(*args, kFrontierArgs);
  if (!known) {
    return fail(ErrorCode::kInvalidArgument,
                "the Frontier arguments: " + known.error().message +
                    " (its plans: --plans DIR)");
  }
  if (args->contains("straggler_tolerance")) {
    const json& t = (*args)["straggler_tolerance"];
    if (!t.is_number() || !(t.get<double>() >= 0.0 && t.get<double>() <= 10.0)) {
      return fail(ErrorCode::kInvalidArgument,
                  "Frontier argument 'straggler_tolerance' must be a number in 0-10 (0.05: a "
                  "pipeline 5 % slower than the others is a straggler)");
    }
    o.straggler_tolerance = t.get<double>();
  }
  return o;
}

Result<SchedulerFactory> frontier_scheduler_factory(const std::string& plans_dir,
                                                    FrontierSchedulerOptions options) {
  if (plans_dir.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "Frontier needs the plans: --plans DIR, the --out folder of `zeus pfo plan`");
  }
  Result<PlanStore> store = PlanStore::open(std::filesystem::path(plans_dir) / "plans.bin");
  if (!store) return fail(store.error());
  auto shared = std::make_shared<const PlanStore>(std::move(*store));
  return SchedulerFactory(
      [shared, options](const JobInfo& job, const std::vector<RankInfo>& ranks) {
        return make_frontier_scheduler(job, ranks, shared, options);
      });
}

}  // namespace zeus::pfo
