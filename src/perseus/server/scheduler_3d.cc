// The 3D-parallel wrapper (perseus/server/scheduler_3d.h).
#include "perseus/server/scheduler_3d.h"

#include <algorithm>
#include <functional>

namespace zeus::pfo {
namespace {

using Combine = std::function<double(double, double)>;

// Element-wise over the common length of all lists, as Python's zip.
std::vector<double> combine(const std::vector<const std::vector<double>*>& lists,
                            const Combine& f) {
  size_t n = lists.empty() ? 0 : lists.front()->size();
  for (const auto* l : lists) n = std::min(n, l->size());
  std::vector<double> out;
  for (size_t i = 0; i < n; ++i) {
    double acc = (*lists.front())[i];
    for (size_t k = 1; k < lists.size(); ++k) acc = f(acc, (*lists[k])[i]);
    out.push_back(acc);
  }
  return out;
}

using Breakdown = std::map<std::string, std::vector<std::vector<double>>>;

// The stage's breakdown: for each instruction the first rank reported, iteration by iteration.
Result<Breakdown> combine_breakdowns(const std::vector<const ProfilingResult*>& stage,
                                     Breakdown ProfilingResult::*field, const Combine& f,
                                     int pp_rank) {
  Breakdown out;
  for (const auto& [name, first] : stage.front()->*field) {
    std::vector<const std::vector<std::vector<double>>*> per_rank;
    for (const ProfilingResult* r : stage) {
      auto it = (r->*field).find(name);
      if (it == (r->*field).end()) {
        return fail(ErrorCode::kInvalidArgument,
                    "rank " + std::to_string(r->rank) + " (stage " + std::to_string(pp_rank) +
                        ") reported no '" + name + "' breakdown, which rank " +
                        std::to_string(stage.front()->rank) + " of its stage did");
      }
      per_rank.push_back(&it->second);
    }
    size_t iterations = first.size();
    for (const auto* p : per_rank) iterations = std::min(iterations, p->size());
    auto& rows = out[name];
    for (size_t i = 0; i < iterations; ++i) {
      std::vector<const std::vector<double>*> lists;
      for (const auto* p : per_rank) lists.push_back(&(*p)[i]);
      rows.push_back(combine(lists, f));
    }
  }
  return out;
}

class Wrapper3d final : public FrequencyScheduler {
 public:
  Wrapper3d(JobInfo job, std::vector<RankInfo> ranks, std::unique_ptr<FrequencyScheduler> inner)
      : job_(std::move(job)), ranks_(std::move(ranks)), inner_(std::move(inner)) {}

  Result<std::vector<FrequencySchedule>> next_schedule() override {
    Result<std::vector<FrequencySchedule>> stages = inner_->next_schedule();
    if (!stages) return stages;
    std::vector<const FrequencySchedule*> by_stage(job_.pp_degree, nullptr);
    for (const FrequencySchedule& s : *stages) {
      if (s.rank >= 0 && s.rank < job_.pp_degree) by_stage[s.rank] = &s;
    }
    std::vector<FrequencySchedule> out;
    for (const RankInfo& r : ranks_) {
      if (by_stage[r.pp_rank] == nullptr) {
        return fail(ErrorCode::kInternal,
                    "the stage-level scheduler gave no schedule for stage " +
                        std::to_string(r.pp_rank));
      }
      out.push_back({r.rank, by_stage[r.pp_rank]->frequencies});
    }
    return out;
  }

  Result<void> observe(const std::vector<ProfilingResult>& results) override {
    Result<std::vector<ProfilingResult>> merged = merge_stage_results(job_, ranks_, results);
    if (!merged) return fail(merged.error());
    return inner_->observe(*merged);
  }

 private:
  JobInfo job_;
  std::vector<RankInfo> ranks_;
  std::unique_ptr<FrequencyScheduler> inner_;
};

}  // namespace

JobInfo pipeline_job(const JobInfo& job) {
  JobInfo p = job;
  p.dp_degree = 1;
  p.tp_degree = 1;
  p.world_size = job.pp_degree;
  return p;
}

std::vector<RankInfo> pipeline_ranks(const std::vector<RankInfo>& ranks) {
  std::vector<RankInfo> out;
  for (const RankInfo& r : ranks) {
    if (r.dp_rank != 0 || r.tp_rank != 0) continue;
    RankInfo stage = r;
    stage.rank = r.pp_rank;
    out.push_back(std::move(stage));
  }
  std::sort(out.begin(), out.end(), [](const RankInfo& a, const RankInfo& b) {
    return a.rank < b.rank;
  });
  return out;
}

Result<std::vector<ProfilingResult>> merge_stage_results(
    const JobInfo& job, const std::vector<RankInfo>& ranks,
    const std::vector<ProfilingResult>& results) {
  std::vector<std::vector<const ProfilingResult*>> stages(job.pp_degree);
  for (const ProfilingResult& r : results) {
    if (r.rank < 0 || r.rank >= static_cast<int>(ranks.size())) {
      return fail(ErrorCode::kInvalidArgument, "a result of rank " + std::to_string(r.rank) +
                                                   ", which the job does not have");
    }
    stages[ranks[r.rank].pp_rank].push_back(&r);
  }
  const Combine max = [](double a, double b) { return std::max(a, b); };
  const Combine sum = [](double a, double b) { return a + b; };
  std::vector<ProfilingResult> out;
  for (int pp = 0; pp < job.pp_degree; ++pp) {
    const auto& stage = stages[pp];
    if (stage.empty()) {
      return fail(ErrorCode::kInvalidArgument, "no result for stage " + std::to_string(pp));
    }
    ProfilingResult merged;
    merged.rank = pp;
    std::vector<const std::vector<double>*> times, energies;
    for (const ProfilingResult* r : stage) {
      times.push_back(&r->iter_time);
      energies.push_back(&r->iter_energy);
    }
    merged.iter_time = combine(times, max);
    merged.iter_energy = combine(energies, sum);
    auto t = combine_breakdowns(stage, &ProfilingResult::time_breakdown, max, pp);
    if (!t) return fail(t.error());
    auto e = combine_breakdowns(stage, &ProfilingResult::energy_breakdown, sum, pp);
    if (!e) return fail(e.error());
    merged.time_breakdown = std::move(*t);
    merged.energy_breakdown = std::move(*e);
    out.push_back(std::move(merged));
  }
  return out;
}

Result<std::unique_ptr<FrequencyScheduler>> make_3d_parallel(const JobInfo& job,
                                                             const std::vector<RankInfo>& ranks,
                                                             const SchedulerFactory& stage_level) {
  auto inner = stage_level(pipeline_job(job), pipeline_ranks(ranks));
  if (!inner) {
    return fail(inner.error().code, inner.error().message +
                                        " (PointSolution3D: one list per pipeline stage)");
  }
  return std::unique_ptr<FrequencyScheduler>(
      std::make_unique<Wrapper3d>(job, ranks, std::move(*inner)));
}

}  // namespace zeus::pfo
