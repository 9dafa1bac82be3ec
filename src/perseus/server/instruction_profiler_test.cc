// The online profiler's decisions (rounds, clocks, warm-up drop, merge, stop rule, CSV) and its
// file edge (arguments, the profile written after each clock).
#include "perseus/server/instruction_profiler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "perseus/server/profiler_scheduler.h"
#include "zeus/perseus/pfo_profile.h"

namespace zeus::pfo {
namespace {

namespace fs = std::filesystem;

JobInfo job(int pp, int dp, int tp) { return {"job", pp, dp, tp, pp * dp * tp, std::nullopt}; }

// Ranks in Megatron's order (tp fastest, then dp, then pp), all listing `clocks`.
std::vector<RankInfo> ranks_of(const JobInfo& j, std::vector<int> clocks) {
  std::vector<RankInfo> out;
  for (int pp = 0; pp < j.pp_degree; ++pp)
    for (int dp = 0; dp < j.dp_degree; ++dp)
      for (int tp = 0; tp < j.tp_degree; ++tp)
        out.push_back({static_cast<int>(out.size()), dp, pp, tp, clocks});
  return out;
}

// A rank's result: `iterations` iterations of `per_iteration` forwards and backwards, each taking
// time(stage, mhz) and energy(stage, mhz); the first iteration is 10x slower and costlier (the
// warm-up the profiler must drop).
using Model = std::function<double(int stage, int mhz)>;
ProfilingResult result_of(const RankInfo& r, int mhz, int iterations, int per_iteration,
                          const Model& time, const Model& energy) {
  ProfilingResult p;
  p.rank = r.rank;
  for (int i = 0; i < iterations; ++i) {
    const double scale = i == 0 ? 10.0 : 1.0;
    for (const char* name : {"forward", "backward"}) {
      const double k = std::string(name) == "backward" ? 2.0 : 1.0;
      p.time_breakdown[name].push_back(
          std::vector<double>(per_iteration, scale * k * time(r.pp_rank, mhz)));
      p.energy_breakdown[name].push_back(
          std::vector<double>(per_iteration, scale * k * energy(r.pp_rank, mhz)));
    }
    p.iter_time.push_back(1.0);
    p.iter_energy.push_back(1.0);
  }
  return p;
}

std::vector<ProfilingResult> results_of(const std::vector<RankInfo>& ranks, int mhz,
                                        const Model& time, const Model& energy,
                                        int iterations = 5) {
  std::vector<ProfilingResult> out;
  for (const RankInfo& r : ranks) out.push_back(result_of(r, mhz, iterations, 4, time, energy));
  return out;
}

const Model kTime = [](int stage, int mhz) { return (1.0 + stage) * 1000.0 / mhz; };
// Energy falls as the clock falls (efficient clocks only).
const Model kFalling = [](int stage, int mhz) { return (1.0 + stage) * mhz / 100.0; };

TEST(InstructionProfilerTest, WarmsUpAtTheTopThenOneRoundPerClockDownToTheFloor) {
  const JobInfo j = job(2, 1, 1);
  const auto ranks = ranks_of(j, {1980, 1500, 1200, 900, 600});
  InstructionProfilerOptions o;
  o.num_microbatches = 3;
  o.minimum_frequency_mhz = 900;
  o.profile_path = "out/profile.csv";
  auto p = InstructionProfiler::make(j, ranks, o);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ((*p)->clocks_mhz(), (std::vector<int>{1980, 1500, 1200, 900}));

  std::vector<int> round_clocks;
  for (int round = 0; round < 6; ++round) {
    auto next = (*p)->next_schedule();
    ASSERT_TRUE(next) << round << ": " << next.error().message;
    ASSERT_EQ(next->size(), 2u);
    // Stage 0 of 2 with 3 microbatches, 1F1B: F F B F B B; stage 1: F B F B F B.
    const auto& s0 = (*next)[0].frequencies;
    const auto& s1 = (*next)[1].frequencies;
    std::vector<std::string> names0, names1;
    for (const auto& [name, mhz] : s0) names0.push_back(name);
    for (const auto& [name, mhz] : s1) names1.push_back(name);
    EXPECT_EQ(names0, (std::vector<std::string>{"forward", "forward", "backward", "forward",
                                                "backward", "backward"}));
    EXPECT_EQ(names1, (std::vector<std::string>{"forward", "backward", "forward", "backward",
                                                "forward", "backward"}));
    const int mhz = s0.front().second;
    for (const auto& s : *next)
      for (const auto& [name, clock] : s.frequencies) EXPECT_EQ(clock, mhz);
    round_clocks.push_back(mhz);
    ASSERT_TRUE((*p)->observe(results_of(ranks, mhz, kTime, kFalling)));
  }
  EXPECT_EQ(round_clocks, (std::vector<int>{1980, 1980, 1980, 1500, 1200, 900}));
  EXPECT_TRUE((*p)->done());
  EXPECT_EQ((*p)->profiled_clocks(), 4);
  auto after = (*p)->next_schedule();
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().message.rfind("[profiling-done]", 0), 0u) << after.error().message;
  EXPECT_NE(after.error().message.find("zeus pfo plan --profile out/profile.csv --stages 2 "
                                       "--microbatches 3"),
            std::string::npos)
      << after.error().message;
  EXPECT_NE(after.error().message.find("the floor is 900 MHz"), std::string::npos);

  // The warm-up iteration (10x) is dropped: the means are the model's values.
  ASSERT_EQ((*p)->records().size(), 16u);
  for (const ProfileRow& r : (*p)->records()) {
    const double k = r.instruction == InstructionKind::kBackward ? 2.0 : 1.0;
    EXPECT_DOUBLE_EQ(r.time_s, k * kTime(r.stage, r.frequency_mhz));
    EXPECT_DOUBLE_EQ(r.energy_j, k * kFalling(r.stage, r.frequency_mhz));
  }
}

TEST(InstructionProfilerTest, TheProfileIsZeusCsvThePlannerReads) {
  const JobInfo j = job(2, 1, 1);
  const auto ranks = ranks_of(j, {1980, 1500, 1200});
  InstructionProfilerOptions o;
  o.num_microbatches = 4;
  o.warmup_rounds = 0;
  auto p = InstructionProfiler::make(j, ranks, o);
  ASSERT_TRUE(p);
  for (int mhz : {1980, 1500, 1200}) {
    ASSERT_TRUE((*p)->observe(results_of(ranks, mhz, kTime, kFalling)));
  }
  const std::string csv = (*p)->profile_csv();
  std::istringstream lines(csv);
  std::string header, first;
  std::getline(lines, header);
  std::getline(lines, first);
  EXPECT_EQ(header, "rank,dp_rank,pp_rank,tp_rank,stage,instruction,frequency,time,energy");
  EXPECT_EQ(first.rfind("0,0,0,0,0,forward,1980,0.50505050505050", 0), 0u) << first;
  auto profile = parse_stage_profile(csv, "profile.csv");
  ASSERT_TRUE(profile) << profile.error().message;
  EXPECT_TRUE(check_profile_covers(*profile, 2));
  ASSERT_EQ(profile->rows.size(), 12u);
  const ProfileRow* row = profile->find(1, InstructionKind::kBackward, 1200);
  ASSERT_NE(row, nullptr);
  EXPECT_DOUBLE_EQ(row->energy_j, 2.0 * kFalling(1, 1200));
}

TEST(InstructionProfilerTest, StopsOnceEnergyRoseFiveTimesInARow) {
  const JobInfo j = job(1, 1, 1);
  std::vector<int> clocks;
  for (int mhz = 1980; mhz >= 900; mhz -= 60) clocks.push_back(mhz);
  const auto ranks = ranks_of(j, clocks);
  InstructionProfilerOptions o;
  o.num_microbatches = 2;
  o.warmup_rounds = 0;
  auto p = InstructionProfiler::make(j, ranks, o);
  ASSERT_TRUE(p);
  // Energy falls down to 1500 MHz, rises at 1440, falls at 1380 (the count restarts), then rises
  // at every clock from 1320 down: the fifth rise in a row is at 1080 MHz.
  const Model energy = [](int, int mhz) {
    if (mhz >= 1500) return mhz / 100.0;
    if (mhz == 1440) return 16.0;
    if (mhz == 1380) return 14.0;
    return 14.0 + (1380 - mhz) / 60.0;
  };
  std::vector<int> run;
  while (!(*p)->done()) {
    auto next = (*p)->next_schedule();
    ASSERT_TRUE(next);
    const int mhz = (*next)[0].frequencies[0].second;
    run.push_back(mhz);
    ASSERT_TRUE((*p)->observe(results_of(ranks, mhz, kTime, energy)));
    ASSERT_LT(run.size(), clocks.size() + 1);
  }
  EXPECT_EQ(run.back(), 1080);
  EXPECT_EQ(run.size(), 16u);
  auto after = (*p)->next_schedule();
  ASSERT_FALSE(after);
  EXPECT_NE(after.error().message.find("energy rose 5 times in a row down to 1080 MHz"),
            std::string::npos)
      << after.error().message;

  // max_energy_rises 0: every clock is run.
  o.max_energy_rises = 0;
  auto all = InstructionProfiler::make(j, ranks, o);
  ASSERT_TRUE(all);
  for (int mhz : clocks) ASSERT_TRUE((*all)->observe(results_of(ranks, mhz, kTime, energy)));
  EXPECT_TRUE((*all)->done());
  EXPECT_EQ((*all)->profiled_clocks(), static_cast<int>(clocks.size()));
}

TEST(InstructionProfilerTest, MergesTheRanksOfAStageIntoOnePipelineReplica) {
  const JobInfo j = job(2, 2, 2);  // 8 ranks
  const auto ranks = ranks_of(j, {1980, 1500});
  InstructionProfilerOptions o;
  o.num_microbatches = 2;
  o.warmup_rounds = 0;
  o.warmup_step_ratio = 0.5;  // 4 iterations: the first two dropped
  auto p = InstructionProfiler::make(j, ranks, o);
  ASSERT_TRUE(p);
  auto first = (*p)->next_schedule();
  ASSERT_TRUE(first);
  ASSERT_EQ(first->size(), 8u);  // every rank, its stage's order
  EXPECT_EQ((*first)[5].frequencies, (*first)[4].frequencies);
  // Rank r's times are 0.1 * (r + 1), energies 1 J each, but 50x in the two dropped iterations.
  std::vector<ProfilingResult> results;
  for (const RankInfo& r : ranks) {
    ProfilingResult res;
    res.rank = r.rank;
    for (int i = 0; i < 4; ++i) {
      const double noise = i < 2 ? 50.0 : 1.0;
      for (const char* name : {"forward", "backward"}) {
        res.time_breakdown[name].push_back(
            {noise * 0.1 * (r.rank + 1), noise * 0.1 * (r.rank + 1)});
        res.energy_breakdown[name].push_back({noise * 1.0, noise * 1.0});
      }
    }
    results.push_back(res);
  }
  ASSERT_TRUE((*p)->observe(results));
  for (const ProfileRow& rec : (*p)->records()) {
    // Stage 0 holds ranks 0-3, stage 1 ranks 4-7: the slowest rank's time; 4 ranks' energy over
    // dp 2 = the 2 tensor-parallel GPUs of one replica.
    EXPECT_DOUBLE_EQ(rec.time_s, rec.stage == 0 ? 0.4 : 0.8);
    EXPECT_DOUBLE_EQ(rec.energy_j, 2.0);
  }
  EXPECT_NE((*p)->profile_csv().find("\n4,0,1,0,1,forward,1980,"), std::string::npos)
      << (*p)->profile_csv();
}

TEST(InstructionProfilerTest, ClocksAreThoseEveryRankSupports) {
  const JobInfo j = job(2, 1, 1);
  std::vector<RankInfo> ranks = ranks_of(j, {1980, 1500, 1200, 900});
  ranks[1].available_frequencies = {1500, 1980, 900, 600};
  InstructionProfilerOptions o;
  o.num_microbatches = 1;
  auto clocks = profiler_clocks(ranks, o);
  ASSERT_TRUE(clocks);
  EXPECT_EQ(*clocks, (std::vector<int>{1980, 1500, 900}));

  o.frequencies_mhz = {1500, 1200};
  auto unsupported = profiler_clocks(ranks, o);
  ASSERT_FALSE(unsupported);
  EXPECT_NE(unsupported.error().message.find("1200 MHz, which rank 1's GPU does not support"),
            std::string::npos)
      << unsupported.error().message;

  o.frequencies_mhz = {};
  o.minimum_frequency_mhz = 1600;
  auto one = profiler_clocks(ranks, o);
  ASSERT_FALSE(one);
  EXPECT_NE(one.error().message.find("at least two clocks at or above minimum_frequency 1600"),
            std::string::npos)
      << one.error().message;

  o.minimum_frequency_mhz = 850;
  ranks[0].available_frequencies.clear();
  auto none = profiler_clocks(ranks, o);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("rank 0 listed no supported clocks"), std::string::npos);
}

TEST(InstructionProfilerTest, ResultsWithoutBreakdownsOrIterationsAreRefusedByName) {
  const JobInfo j = job(2, 1, 1);
  const auto ranks = ranks_of(j, {1980, 1500});
  InstructionProfilerOptions o;
  o.num_microbatches = 2;
  o.warmup_rounds = 1;
  auto p = InstructionProfiler::make(j, ranks, o);
  ASSERT_TRUE(p);
  // Warm-up results are not read: Zeus 0.16-style results with no breakdown pass.
  std::vector<ProfilingResult> bare = {{0, {1.0}, {1.0}, {}, {}}, {1, {1.0}, {1.0}, {}, {}}};
  ASSERT_TRUE((*p)->observe(bare));
  auto missing = (*p)->observe(bare);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("stage 0's 'forward' at 1980 MHz has no time_breakdown"),
            std::string::npos)
      << missing.error().message;
  auto single = (*p)->observe(results_of(ranks, 1980, kTime, kFalling, /*iterations=*/1));
  ASSERT_FALSE(single);
  EXPECT_NE(single.error().message.find("the first 1 are dropped as warm-up"), std::string::npos)
      << single.error().message;
  const Model negative = [](int, int) { return -1.0; };
  auto below_zero = (*p)->observe(results_of(ranks, 1980, kTime, negative));
  ASSERT_FALSE(below_zero);
  EXPECT_NE(below_zero.error().message.find("energies >= 0 J"), std::string::npos)
      << below_zero.error().message;
  // Finite values whose sum overflows never reach the profile as inf.
  const Model huge = [](int, int) { return 1.5e308; };
  auto overflow = (*p)->observe(results_of(ranks, 1980, kTime, huge));
  ASSERT_FALSE(overflow);
  EXPECT_NE(overflow.error().message.find("energies >= 0 J"), std::string::npos)
      << overflow.error().message;
  EXPECT_EQ((*p)->profiled_clocks(), 0);
}

TEST(InstructionProfilerTest, ArgumentsAreCheckedByName) {
  auto o = parse_profiler_args(R"({"num_microbatches": 8, "frequencies": [1980, 1500],
      "minimum_power_state": 1000, "warmup_rounds": 1, "warmup_step_ratio": 0.2,
      "max_energy_rises": 3, "profile_path": "p.csv"})");
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->num_microbatches, 8);
  EXPECT_EQ(o->frequencies_mhz, (std::vector<int>{1980, 1500}));
  EXPECT_EQ(o->minimum_frequency_mhz, 1000);
  EXPECT_EQ(o->warmup_rounds, 1);
  EXPECT_DOUBLE_EQ(o->warmup_step_ratio, 0.2);
  EXPECT_EQ(o->max_energy_rises, 3);
  EXPECT_EQ(o->profile_path, "p.csv");

  const auto error_of = [](const std::string& args, const std::string& dump = "d") {
    auto f = instruction_profiler_factory(args, dump);
    return f ? std::string("accepted") : f.error().message;
  };
  EXPECT_NE(error_of("{}").find("needs num_microbatches"), std::string::npos);
  EXPECT_NE(error_of(R"({"num_microbatches": 8, "minimum_freq": 1})")
                .find("unknown field 'minimum_freq'"),
            std::string::npos);
  EXPECT_NE(
      error_of(R"({"num_microbatches": "8"})").find("'num_microbatches' must be a whole number"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"num_microbatches": 8, "num_microbatches": 9})").find("duplicate field"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"num_microbatches": 8, "warmup_step_ratio": 1})").find("[0, 1)"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"num_microbatches": 8, "frequencies": []})").find("is empty"),
            std::string::npos);
  EXPECT_NE(error_of("[8]").find("a JSON object"), std::string::npos);
  EXPECT_NE(error_of(R"({"num_microbatches": 8})", "").find("--dump DIR"), std::string::npos);
  EXPECT_EQ(error_of(R"({"num_microbatches": 8})"), "accepted");

  auto point = scheduler_factory({"PointSolution", "s.py", R"({"num_microbatches": 8})", ""});
  ASSERT_FALSE(point);
  EXPECT_NE(point.error().message.find("are InstructionProfiler's"), std::string::npos);
}

TEST(InstructionProfilerTest, TheFactoryWritesTheProfileAfterEachClock) {
  const fs::path dir = fs::temp_directory_path() / ("profiler_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto make = scheduler_factory(
      {"profiler", "", R"({"num_microbatches": 2, "warmup_rounds": 1})", dir.string()});
  ASSERT_TRUE(make) << make.error().message;
  JobInfo j = job(2, 1, 1);
  j.job_id = "2026-01-01-00-00-00+dp1+pp2+tp1+InstructionProfiler";
  const auto ranks = ranks_of(j, {1980, 1500, 1200});
  auto s = (*make)(j, ranks);
  ASSERT_TRUE(s) << s.error().message;
  const fs::path csv = dir / j.job_id / "stage_profile.csv";
  ASSERT_TRUE((*s)->observe(results_of(ranks, 1980, kTime, kFalling)));  // warm-up
  EXPECT_FALSE(fs::exists(csv));
  ASSERT_TRUE((*s)->observe(results_of(ranks, 1980, kTime, kFalling)));
  ASSERT_TRUE(fs::exists(csv));
  std::ifstream in(csv);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 5);  // header + 2 stages x 2
  fs::remove_all(dir);

  // A profile path that cannot be written fails the round with the reason.
  auto blocked =
      scheduler_factory({"InstructionProfiler", "", R"({"num_microbatches": 2, "warmup_rounds": 0,
          "profile_path": "/proc/no/{job_id}.csv"})",
                         ""});
  ASSERT_TRUE(blocked);
  auto b = (*blocked)(j, ranks);
  ASSERT_TRUE(b);
  auto failed = (*b)->observe(results_of(ranks, 1980, kTime, kFalling));
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("/proc/no/" + j.job_id + ".csv"), std::string::npos)
      << failed.error().message;
}

}  // namespace
}  // namespace zeus::pfo
