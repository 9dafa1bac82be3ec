// The Frontier scheduler (pfo_server/scheduler_frontier.h).
#include "pfo_server/scheduler_frontier.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>

#include "zeus/pfo_straggler_policy.h"

namespace zeus::pfo {
namespace {

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4f s", s);
  return text;
}

class FrontierScheduler final : public FrequencyScheduler, public StragglerAware {
 public:
  FrontierScheduler(std::vector<RankInfo> ranks, std::shared_ptr<const PlanStore> store,
                    FrontierSchedulerOptions options)
      : ranks_(std::move(ranks)), store_(std::move(store)), options_(options) {}

  Result<std::vector<FrequencySchedule>> next_schedule() override {
    const std::optional<double> straggler = operator_time_s_ ? operator_time_s_ : measured_time_s_;
    Result<std::vector<std::vector<int>>> clocks = choose(straggler);
    if (!clocks) return fail(clocks.error());
    std::vector<FrequencySchedule> out;
    for (const RankInfo& rank : ranks_) {
      FrequencySchedule schedule{rank.rank, {}};
      const auto& kinds = store_->kinds()[static_cast<std::size_t>(rank.pp_rank)];
      const auto& stage = (*clocks)[static_cast<std::size_t>(rank.pp_rank)];
      for (std::size_t k = 0; k < kinds.size(); ++k)
        schedule.frequencies.emplace_back(instruction_name(kinds[k]), stage[k]);
      out.push_back(std::move(schedule));
    }
    return out;
  }

  Result<void> observe(const std::vector<ProfilingResult>& results) override {
    // The round's iteration time: the longest of the ranks' mean iteration times.
    double measured_s = 0.0;
    for (const ProfilingResult& r : results) {
      if (r.iter_time.empty()) continue;
      const double mean = std::accumulate(r.iter_time.begin(), r.iter_time.end(), 0.0) /
                          static_cast<double>(r.iter_time.size());
      measured_s = std::max(measured_s, mean);
    }
    if (!(measured_s > 0.0) || !std::isfinite(measured_s)) return ok();  // nothing measured
    if (!calibration_) {
      // The first measured round ran the fastest plan: measured seconds per planned second.
      calibration_ = measured_s / served_time_s_;
      return ok();
    }
    const double slowdown = measured_s / (served_time_s_ * *calibration_);
    if (slowdown > 1.0 + options_.straggler_tolerance) {
      measured_time_s_ = slowdown * fastest_plan(store_->candidates()).point.time_s;
    } else {
      measured_time_s_.reset();
    }
    return ok();
  }

  std::string straggler_state() const override { return state_; }

  Result<void> set_straggler_time(std::optional<double> iteration_time_s) override {
    if (iteration_time_s && !(*iteration_time_s > 0.0 && std::isfinite(*iteration_time_s))) {
      return fail(ErrorCode::kInvalidArgument,
                  "iteration_time_s must be a positive number of seconds (the straggler's "
                  "iteration time, in the plans' seconds)");
    }
    operator_time_s_ = iteration_time_s;
    return ok();
  }

 private:
  // The clocks per stage for a straggler at `straggler_s` (none: the fastest plan).
  Result<std::vector<std::vector<int>>> choose(std::optional<double> straggler_s) {
    const PlanCandidates candidates = store_->candidates();
    std::optional<std::size_t> plan;
    std::optional<int> global_clock;
    if (!straggler_s) {
      const PlanChoice fastest = fastest_plan(candidates);
      plan = fastest.plan;
      served_time_s_ = fastest.point.time_s;
    } else {
      Result<CombinedChoice> choice =
          combined_straggler_plan(candidates, store_->global_clocks(),
                                  {store_->num_stages(), store_->p2p_power_w()}, *straggler_s);
      if (!choice) return fail(choice.error());
      plan = choice->frontier.plan;
      global_clock = choice->global_clock_mhz;
      served_time_s_ = choice->time_s;
    }
    const std::string what = global_clock ? "global clock " + std::to_string(*global_clock) + " MHz"
                             : plan       ? "plan " + std::to_string(*plan)
                                          : std::string("the T_max schedule");
    state_ = (straggler_s ? "straggler at " + seconds(*straggler_s) +
                                (operator_time_s_ ? " (operator): " : " (measured): ")
                          : std::string("no straggler: fastest ")) +
             what + " (" + seconds(served_time_s_) + ")";
    if (global_clock) {
      std::vector<std::vector<int>> clocks;
      for (const auto& kinds : store_->kinds()) clocks.emplace_back(kinds.size(), *global_clock);
      return clocks;
    }
    if (!plan) return store_->all_slowest_clocks_mhz();
    if (cached_plan_ != plan) {  // rounds often repeat a plan: decode it once
      Result<std::vector<std::vector<int>>> clocks = store_->clocks_mhz(*plan);
      if (!clocks) return fail(clocks.error());
      cached_clocks_ = std::move(*clocks);
      cached_plan_ = plan;
    }
    return cached_clocks_;
  }

  std::vector<RankInfo> ranks_;
  std::shared_ptr<const PlanStore> store_;
  FrontierSchedulerOptions options_;
  std::optional<double> operator_time_s_;
  std::optional<double> measured_time_s_;
  std::optional<double> calibration_;
  double served_time_s_ = 0.0;  // the planned time of the plan last handed out
  std::string state_ = "no round yet";
  std::optional<std::size_t> cached_plan_;
  std::vector<std::vector<int>> cached_clocks_;
};

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
