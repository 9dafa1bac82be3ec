// The online profiler (perseus/server/instruction_profiler.h).
#include "perseus/server/instruction_profiler.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <set>
#include <sstream>
#include <tuple>

#include "perseus/planner/python_float.h"
#include "perseus/server/scheduler_3d.h"
#include "zeus/perseus/pfo_planner.h"

namespace zeus::pfo {
namespace {

constexpr InstructionKind kKinds[] = {InstructionKind::kForward, InstructionKind::kBackward};

}  // namespace

Result<void> check_profiler_options(const InstructionProfilerOptions& o) {
  const auto bad = [](const std::string& m) { return fail(ErrorCode::kInvalidArgument, m); };
  if (o.num_microbatches < 1) {
    return bad(
        "InstructionProfiler needs num_microbatches (>= 1), the microbatches of one "
        "iteration, to send each rank its stage's 1F1B instructions; give it in the "
        "scheduler arguments, e.g. {\"num_microbatches\": 8}");
  }
  if (o.warmup_rounds < 0) return bad("warmup_rounds must be >= 0");
  if (!(o.warmup_step_ratio >= 0 && o.warmup_step_ratio < 1)) {
    return bad("warmup_step_ratio must be in [0, 1) (the share of a round's iterations dropped)");
  }
  if (o.minimum_frequency_mhz < 0) return bad("minimum_frequency must be >= 0 MHz");
  if (o.max_energy_rises < 0) return bad("max_energy_rises must be >= 0 (0: never stop early)");
  return ok();
}

namespace {

std::string clock_list(const std::vector<int>& clocks) {
  std::string out;
  for (size_t i = 0; i < clocks.size() && i < 8; ++i)
    out += (i ? ", " : "") + std::to_string(clocks[i]);
  if (clocks.size() > 8) out += ", ... (" + std::to_string(clocks.size()) + " clocks)";
  return out.empty() ? "none" : out;
}

// Mean of the instances of the iterations after the first `drop`.
double mean_after(const std::vector<std::vector<double>>& iterations, size_t drop, size_t* count) {
  double sum = 0.0;
  *count = 0;
  for (size_t i = drop; i < iterations.size(); ++i) {
    for (double v : iterations[i]) {
      sum += v;
      ++*count;
    }
  }
  return *count ? sum / static_cast<double>(*count) : 0.0;
}

}  // namespace

Result<std::vector<int>> profiler_clocks(const std::vector<RankInfo>& ranks,
                                         const InstructionProfilerOptions& options) {
  std::vector<int> clocks = options.frequencies_mhz;
  if (clocks.empty()) {
    bool first = true;
    std::set<int> common;
    for (const RankInfo& r : ranks) {
      if (r.available_frequencies.empty()) {
        return fail(ErrorCode::kInvalidArgument,
                    "rank " + std::to_string(r.rank) +
                        " listed no supported clocks (available_frequencies is empty); give the "
                        "clocks to profile in the scheduler arguments, e.g. {\"frequencies\": "
                        "[1980, 1965, ...]}");
      }
      std::set<int> mine(r.available_frequencies.begin(), r.available_frequencies.end());
      if (first) {
        common = std::move(mine);
        first = false;
      } else {
        std::set<int> both;
        std::set_intersection(common.begin(), common.end(), mine.begin(), mine.end(),
                              std::inserter(both, both.end()));
        common = std::move(both);
      }
    }
    clocks.assign(common.begin(), common.end());
  } else {
    for (const RankInfo& r : ranks) {
      if (r.available_frequencies.empty()) continue;
      const std::set<int> mine(r.available_frequencies.begin(), r.available_frequencies.end());
      for (int mhz : clocks) {
        if (!mine.count(mhz)) {
          return fail(ErrorCode::kInvalidArgument,
                      "the profiler's frequencies include " + std::to_string(mhz) +
                          " MHz, which rank " + std::to_string(r.rank) +
                          "'s GPU does not support (" + clock_list(r.available_frequencies) +
                          " MHz)");
        }
      }
    }
  }
  std::sort(clocks.begin(), clocks.end(), std::greater<int>());
  clocks.erase(std::unique(clocks.begin(), clocks.end()), clocks.end());
  const std::vector<int> all = clocks;
  clocks.erase(
      std::remove_if(clocks.begin(), clocks.end(),
                     [&](int mhz) { return mhz < options.minimum_frequency_mhz || mhz <= 0; }),
      clocks.end());
  if (clocks.size() < 2) {
    return fail(
        ErrorCode::kInvalidArgument,
        "the profiler needs at least two clocks at or above minimum_frequency " +
            std::to_string(options.minimum_frequency_mhz) + " MHz to profile, and the " +
            (options.frequencies_mhz.empty() ? "clocks every rank supports" : "frequencies given") +
            " leave " + std::to_string(clocks.size()) + " (of " + clock_list(all) +
            " MHz); lower minimum_frequency or list more frequencies");
  }
  return clocks;
}

Result<std::unique_ptr<InstructionProfiler>> InstructionProfiler::make(
    const JobInfo& job, std::vector<RankInfo> ranks, InstructionProfilerOptions options) {
  ZEUS_TRY(check_profiler_options(options));
  if (static_cast<int>(ranks.size()) != job.world_size) {
    return fail(ErrorCode::kInternal, "the profiler was given " + std::to_string(ranks.size()) +
                                          " ranks for a job of " + std::to_string(job.world_size));
  }
  Result<std::vector<int>> clocks = profiler_clocks(ranks, options);
  if (!clocks) return fail(clocks.error());
  return std::unique_ptr<InstructionProfiler>(
      new InstructionProfiler(job, std::move(ranks), std::move(options), std::move(*clocks)));
}

InstructionProfiler::InstructionProfiler(JobInfo job, std::vector<RankInfo> ranks,
                                         InstructionProfilerOptions options,
                                         std::vector<int> clocks)
    : job_(std::move(job)),
      ranks_(std::move(ranks)),
      options_(std::move(options)),
      clocks_(std::move(clocks)) {
  for (int s = 0; s < job_.pp_degree; ++s) {
    std::vector<std::string> names;
    for (const PipelineInstruction& i :
         one_f_one_b_order(job_.pp_degree, options_.num_microbatches, s)) {
      names.emplace_back(instruction_name(i.kind));
    }
    stage_names_.push_back(std::move(names));
  }
}

std::vector<FrequencySchedule> InstructionProfiler::round_at(int mhz) const {
  std::vector<FrequencySchedule> out;
  for (const RankInfo& r : ranks_) {
    FrequencySchedule s{r.rank, {}};
    for (const std::string& name : stage_names_[r.pp_rank]) s.frequencies.emplace_back(name, mhz);
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::vector<FrequencySchedule>> InstructionProfiler::next_schedule() {
  if (done_) return fail(ErrorCode::kUnavailable, done_message());
  if (warmups_done_ < options_.warmup_rounds) return round_at(clocks_.front());
  return round_at(clocks_[measured_]);
}

Result<void> InstructionProfiler::observe(const std::vector<ProfilingResult>& results) {
  if (done_) return ok();
  if (warmups_done_ < options_.warmup_rounds) {
    ++warmups_done_;
    return ok();
  }
  const int mhz = clocks_[measured_];
  Result<std::vector<ProfilingResult>> stages = merge_stage_results(job_, ranks_, results);
  if (!stages) return fail(stages.error());
  std::vector<ProfileRow> round;
  double round_energy_j = 0.0;
  for (const ProfilingResult& stage : *stages) {
    for (InstructionKind kind : kKinds) {
      const std::string name(instruction_name(kind));
      const std::string where = "stage " + std::to_string(stage.rank) + "'s '" + name + "' at " +
                                std::to_string(mhz) + " MHz";
      const auto t = stage.time_breakdown.find(name);
      const auto e = stage.energy_breakdown.find(name);
      if (t == stage.time_breakdown.end() || e == stage.energy_breakdown.end()) {
        return fail(ErrorCode::kInvalidArgument,
                    "the profiler needs each instruction's time and energy, but " + where +
                        " has no " + (t == stage.time_breakdown.end() ? "time" : "energy") +
                        "_breakdown entry; report ProfilingResults with time_breakdown and "
                        "energy_breakdown per instruction (a client that measures them)");
      }
      const size_t n = t->second.size();
      if (e->second.size() != n) {
        return fail(ErrorCode::kInvalidArgument,
                    where + ": " + std::to_string(n) + " iterations of times but " +
                        std::to_string(e->second.size()) + " of energies");
      }
      const size_t drop = std::max<size_t>(
          1, static_cast<size_t>(std::floor(static_cast<double>(n) * options_.warmup_step_ratio)));
      size_t times = 0, energies = 0;
      const double time_s = mean_after(t->second, drop, &times);
      const double energy_j =
          mean_after(e->second, drop, &energies) / static_cast<double>(job_.dp_degree);
      if (times == 0 || energies == 0) {
        return fail(ErrorCode::kInvalidArgument,
                    where + ": " + std::to_string(n) + " iterations reported; the first " +
                        std::to_string(drop) +
                        " are dropped as warm-up and nothing measured "
                        "remains: run more iterations per round before reporting");
      }
      // Finite too: values each finite can sum to inf.
      if (!(time_s > 0) || !(energy_j >= 0) || !std::isfinite(time_s) || !std::isfinite(energy_j)) {
        return fail(ErrorCode::kInvalidArgument,
                    where + ": a mean time of " + python_float_repr(time_s) + " s and energy of " +
                        python_float_repr(energy_j) +
                        " J; times must be > 0 s and energies >= 0 J (check the client's units)");
      }
      round.push_back({stage.rank, kind, mhz, time_s, energy_j});
      round_energy_j += energy_j;
    }
  }
  records_.insert(records_.end(), round.begin(), round.end());
  rises_ = (measured_ > 0 && round_energy_j > last_energy_j_) ? rises_ + 1 : 0;
  last_energy_j_ = round_energy_j;
  ++measured_;
  if (options_.max_energy_rises > 0 && rises_ >= options_.max_energy_rises) {
    done_ = true;
    stop_reason_ = "energy rose " + std::to_string(rises_) + " times in a row down to " +
                   std::to_string(mhz) + " MHz";
  } else if (measured_ == static_cast<int>(clocks_.size())) {
    done_ = true;
    stop_reason_ = "every clock down to " + std::to_string(mhz) + " MHz (the floor is " +
                   std::to_string(options_.minimum_frequency_mhz) + " MHz)";
  }
  return ok();
}

std::string InstructionProfiler::profile_csv() const {
  std::vector<const ProfileRow*> sorted;
  for (const ProfileRow& r : records_) sorted.push_back(&r);
  // By stage, forward before backward, clocks in the order measured (highest first).
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
    return std::tie(a->stage, a->instruction) < std::tie(b->stage, b->instruction);
  });
  std::vector<const RankInfo*> stage_rank(job_.pp_degree, nullptr);
  for (const RankInfo& r : ranks_) {
    if (r.dp_rank == 0 && r.tp_rank == 0) stage_rank[r.pp_rank] = &r;
  }
  std::ostringstream csv;
  csv << "rank,dp_rank,pp_rank,tp_rank,stage,instruction,frequency,time,energy\n";
  for (const ProfileRow* r : sorted) {
    const int rank = stage_rank[r->stage] ? stage_rank[r->stage]->rank : r->stage;
    csv << rank << ",0," << r->stage << ",0," << r->stage << ',' << instruction_name(r->instruction)
        << ',' << r->frequency_mhz << ',' << python_float_repr(r->time_s) << ','
        << python_float_repr(r->energy_j) << '\n';
  }
  return csv.str();
}

std::string InstructionProfiler::done_message() const {
  const std::string path = options_.profile_path.empty() ? "PROFILE.csv" : options_.profile_path;
  return "[profiling-done] profiling is done, stop training: " + std::to_string(measured_) +
         " clocks (" + std::to_string(clocks_.front()) + "-" +
         std::to_string(clocks_[measured_ - 1]) + " MHz) of " + std::to_string(job_.pp_degree) +
         " stages measured, " + stop_reason_ + ". The stage profile is " + path +
         "; plan with `zeus pfo plan --profile " + path + " --stages " +
         std::to_string(job_.pp_degree) + " --microbatches " +
         std::to_string(options_.num_microbatches) +
         " --p2p-power W --out plans/` (W: a GPU's power while it waits for its neighbours, x "
         "the tensor-parallel degree)";
}

}  // namespace zeus::pfo
