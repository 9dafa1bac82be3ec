// `zeus simulate serving`'s model and comparison (issue 38): the trace reader's refusals, every
// request answered once with its TTFT before its TPOT, the four policies in order, the best static
// clock within its violation budget and no costlier than the maximum, and the governor saving
// energy on a decode-heavy load without losing more than a point of SLO attainment.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "zeus/serving/sim_serving.h"

namespace zeus::sim {
namespace {

namespace fs = std::filesystem;

class ServingSimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("serving_sim_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  // A chat-like trace: `n` requests at `rate`/s, short prompts, long answers, in waves.
  std::string chat(int n, double rate) {
    std::string text = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
    for (int i = 0; i < n; ++i) {
      const double t = i / rate + ((i / 200) % 2 ? 0.0 : 0.3 / rate);  // waves of load
      const int seconds = static_cast<int>(t);
      char line[96];
      std::snprintf(line, sizeof line, "2023-11-16 18:%02d:%02d.%07d,%d,%d\n", 10 + seconds / 60,
                    seconds % 60, static_cast<int>((t - seconds) * 1e7), 300 + (i * 37) % 900,
                    80 + (i * 53) % 300);
      text += line;
    }
    return write("chat.csv", text);
  }
  fs::path dir_;
};

TEST_F(ServingSimTest, TheTraceReaderNamesWhatIsWrong) {
  auto missing = load_serving_trace(write("a.csv", "TIMESTAMP,ContextTokens\n2023-11-16 18:00:00,5\n"));
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("GeneratedTokens"), std::string::npos);
  auto bad_time = load_serving_trace(
      write("b.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00,5,5\nyesterday,5,5\n"));
  ASSERT_FALSE(bad_time.has_value());
  EXPECT_NE(bad_time.error().message.find("line 3"), std::string::npos) << bad_time.error().message;
  auto negative = load_serving_trace(
      write("c.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00,-5,5\n"));
  ASSERT_FALSE(negative.has_value());
  auto ok = load_serving_trace(write(
      "d.csv", "GeneratedTokens,TIMESTAMP,ContextTokens\n0,2023-11-16 23:59:59.5,10\n3,2023-11-17 00:00:00.5,20\n"));
  ASSERT_TRUE(ok.has_value()) << ok.error().to_string();
  ASSERT_EQ(ok->requests.size(), 2u);
  EXPECT_DOUBLE_EQ(ok->requests[1].arrival_s, 1.0);  // across midnight
  EXPECT_EQ(ok->requests[0].output_tokens, 1);       // an empty answer is still one
}

TEST_F(ServingSimTest, FourPoliciesTheStaticWithinBudgetAndTheGovernorSaves) {
  auto trace = load_serving_trace(chat(1500, 4.0));
  ASSERT_TRUE(trace.has_value()) << trace.error().to_string();
  auto e = run_serving_experiment(*trace, ServingSimOptions{});
  ASSERT_TRUE(e.has_value()) << e.error().to_string();
  ASSERT_EQ(e->policies.size(), 4u);
  const char* names[] = {"max-clock", "best-static", "dual-loop", "governor"};
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(e->policies[i].name, names[i]);
  const ServingPolicyResult& max = e->policies[0];
  const ServingPolicyResult& best = e->policies[1];
  const ServingPolicyResult& ours = e->policies[3];
  EXPECT_GT(e->ttft_slo_s, max.ttft_p99_s);  // 1.5 x the maximum clock's own p99
  EXPECT_LE(best.energy_j, max.energy_j);
  EXPECT_LE(best.slo_violation_rate, max.slo_violation_rate + 0.01);
  EXPECT_LT(best.static_clock_mhz, 1980);  // a decode-heavy load needs less than the maximum
  EXPECT_LT(ours.energy_j, 0.9 * max.energy_j);
  // The replay is deterministic: 0.87 points here (SLOs only 1.5 x a smooth load's p99).
  EXPECT_LE(ours.slo_violation_rate, max.slo_violation_rate + 0.01);
  EXPECT_NEAR(max.j_per_token * static_cast<double>(e->output_tokens), max.energy_j, 1e-6 * max.energy_j);
  for (const ServingPolicyResult& p : e->policies) {
    EXPECT_GT(p.ttft_p99_s, 0) << p.name;
    EXPECT_GE(p.ttft_p99_s, p.ttft_p50_s) << p.name;
    EXPECT_GE(p.tpot_p99_s, p.tpot_p50_s) << p.name;
  }
  EXPECT_GT(ours.clock_timeline.size(), 2u);  // it moved
}

TEST_F(ServingSimTest, GivenSlosAreUsedAndBadOptionsRefused) {
  auto trace = load_serving_trace(chat(200, 2.0));
  ASSERT_TRUE(trace.has_value());
  ServingSimOptions o;
  o.governor.ttft_slo_s = 0.5;
  o.governor.tpot_slo_s = 0.02;
  auto e = run_serving_experiment(*trace, o);
  ASSERT_TRUE(e.has_value());
  EXPECT_DOUBLE_EQ(e->ttft_slo_s, 0.5);
  EXPECT_DOUBLE_EQ(e->tpot_slo_s, 0.02);
  o.time_scale = 0;
  EXPECT_FALSE(run_serving_experiment(*trace, o).has_value());
}

TEST_F(ServingSimTest, AnSloOfZeroIsDerivedAndTheGovernorsKnobsAreCheckedByTheirOneRule) {
  auto trace = load_serving_trace(chat(200, 2.0));
  ASSERT_TRUE(trace.has_value());
  ServingSimOptions o;
  o.governor.ttft_slo_s = 0.5;  // given; the TPOT SLO (0) is derived
  auto e = run_serving_experiment(*trace, o);
  ASSERT_TRUE(e.has_value());
  EXPECT_DOUBLE_EQ(e->ttft_slo_s, 0.5);
  EXPECT_GT(e->tpot_slo_s, 0);
  o.governor.quantile = 0.3;  // what GovernorOptions::validate refuses, by its words
  auto refused = run_serving_experiment(*trace, o);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message, GovernorOptions{.quantile = 0.3}.validate().error().message);
  o.governor.quantile = 0.99;
  o.governor.tpot_slo_s = -1;  // negative is not "derived": refused
  EXPECT_FALSE(run_serving_experiment(*trace, o).has_value());
}

TEST_F(ServingSimTest, ReplicasAddThePackPoliciesWhichSleepIdleReplicasAndSaveOnALightLoad) {
  auto trace = load_serving_trace(chat(1500, 4.0));
  ASSERT_TRUE(trace.has_value());
  ServingSimOptions o;
  o.replicas = 4;
  // The operator's SLOs, not four idle replicas' p99: one replica can hold them.
  o.governor.ttft_slo_s = 1.0;
  o.governor.tpot_slo_s = 0.05;
  auto e = run_serving_experiment(*trace, o);
  ASSERT_TRUE(e.has_value()) << e.error().to_string();
  ASSERT_EQ(e->policies.size(), 7u);
  const char* names[] = {"max-clock",      "best-static",      "dual-loop",    "governor",
                         "pack-max-clock", "pack-best-static", "pack-governor"};
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(e->policies[i].name, names[i]);
    EXPECT_EQ(e->policies[i].routing, i < 4 ? "least-loaded" : "pack") << names[i];
  }
  const ServingPolicyResult& max = e->policies[0];
  const ServingPolicyResult& pack = e->policies[4];
  const ServingPolicyResult& pack_governor = e->policies[6];
  EXPECT_DOUBLE_EQ(max.mean_awake, 4);
  EXPECT_LT(pack.mean_awake, 2.5);  // a light load packs onto one or two replicas
  EXPECT_LT(pack.energy_j, max.energy_j);
  EXPECT_LT(pack_governor.energy_j, pack.energy_j);
  EXPECT_LE(pack_governor.slo_violation_rate, max.slo_violation_rate + 0.01);
  EXPECT_GT(pack.awake_timeline.size(), 1u);  // replicas went to sleep
  for (const ServingPolicyResult& p : e->policies) {
    EXPECT_GT(p.ttft_p99_s, 0) << p.name;  // every request answered
    EXPECT_LE(p.ttft_p99_s, 10) << p.name;
  }
}

TEST_F(ServingSimTest, OneReplicaIsTheSingleServerAndFourSpreadTheSameTraceThinner) {
  auto trace = load_serving_trace(chat(600, 4.0));
  ASSERT_TRUE(trace.has_value());
  ServingSimOptions one;
  one.governor.ttft_slo_s = 1.0;
  one.governor.tpot_slo_s = 0.05;
  ServingSimOptions four = one;
  four.replicas = 4;
  auto a = run_serving_experiment(*trace, one);
  auto b = run_serving_experiment(*trace, four);
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_EQ(a->policies.size(), 4u);
  // Four replicas at the maximum clock: shorter batches (lower TPOT), four GPUs' idle power.
  EXPECT_LT(b->policies[0].tpot_p50_s, a->policies[0].tpot_p50_s);
  EXPECT_GT(b->policies[0].energy_j, a->policies[0].energy_j);
  ServingSimOptions bad = four;
  bad.replicas = 0;
  EXPECT_FALSE(run_serving_experiment(*trace, bad).has_value());
  bad.replicas = 2;
  bad.router.fill = 0;
  auto refused = run_serving_experiment(*trace, bad);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("fill"), std::string::npos);
}

TEST_F(ServingSimTest, APowerBudgetAddsTwoPoliciesThatHoldItInEveryWholeSecond) {
  auto trace = load_serving_trace(chat(800, 8.0));
  ASSERT_TRUE(trace.has_value());
  ServingSimOptions o;
  o.replicas = 2;
  o.governor.ttft_slo_s = 1.0;
  o.governor.tpot_slo_s = 0.05;
  o.power_budget_w = 0.6 * 2 * 700;
  auto e = run_serving_experiment(*trace, o);
  ASSERT_TRUE(e.has_value()) << e.error().to_string();
  ASSERT_EQ(e->policies.size(), 9u);  // 4, the budget's 2, the pack router's 3
  EXPECT_EQ(e->policies[4].name, "governor-budget");
  EXPECT_EQ(e->policies[5].name, "governor-equal-caps");
  const ServingPolicyResult& max = e->policies[0];
  EXPECT_LT(max.budget_held, 1.0);  // the maximum clock goes over it
  EXPECT_GT(max.peak_window_w, o.power_budget_w);
  for (size_t i : {4u, 5u}) {
    EXPECT_GE(e->policies[i].budget_held, 0.99) << e->policies[i].name;
    EXPECT_LE(e->policies[i].peak_window_w, o.power_budget_w * 1.05) << e->policies[i].name;
  }
  ServingSimOptions bad = o;
  bad.power_budget_w = -5;
  EXPECT_FALSE(run_serving_experiment(*trace, bad).has_value());
  bad.power_budget_w = 0;  // none: no budget policies, no windows counted
  auto none = run_serving_experiment(*trace, bad);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->policies.size(), 7u);
  EXPECT_EQ(none->policies[0].budget_held, -1);
}

TEST_F(ServingSimTest, PrefillAndDecodeApartHandTheKvCacheOnAndTheDecodePoolRunsLow) {
  auto trace = load_serving_trace(chat(600, 4.0));
  ASSERT_TRUE(trace.has_value());
  ServingSimOptions o;
  o.replicas = 3;
  o.prefill_replicas = 1;
  o.governor.ttft_slo_s = 1.0;
  o.governor.tpot_slo_s = 0.05;
  auto e = run_serving_experiment(*trace, o);
  ASSERT_TRUE(e.has_value()) << e.error().to_string();
  std::map<std::string, const ServingPolicyResult*> by_name;
  for (const ServingPolicyResult& p : e->policies) by_name[p.name] = &p;
  ASSERT_TRUE(by_name.count("pd-max-clock") && by_name.count("pd-best-static") &&
              by_name.count("pd-governor"));
  const ServingPolicyResult& top = *by_name["pd-max-clock"];
  const ServingPolicyResult& best = *by_name["pd-best-static"];
  const ServingPolicyResult& ours = *by_name["pd-governor"];
  EXPECT_EQ(top.routing, "prefill-decode");
  // Every request answered: its first token from the prefill pool, the rest from the decode pool.
  EXPECT_GT(top.ttft_p99_s, 0);
  EXPECT_GT(top.tpot_p50_s, 0);
  // Decode alone is memory-bound: the best pair keeps the prefill clock above the decode one.
  EXPECT_GE(best.prefill_clock_mhz, best.static_clock_mhz);
  EXPECT_LT(best.energy_j, top.energy_j);
  EXPECT_LT(ours.energy_j, 0.9 * top.energy_j);
  EXPECT_LE(ours.slo_violation_rate, top.slo_violation_rate + 0.01);
  // A slow KV transfer shows in the TPOT (a request's tokens wait for its cache), not the TTFT.
  ServingSimOptions slow = o;
  slow.kv_transfer_s_per_token = 1e-3;
  auto s = run_serving_experiment(*trace, slow);
  ASSERT_TRUE(s.has_value());
  for (const ServingPolicyResult& p : s->policies) {
    if (p.name == "pd-max-clock") {
      EXPECT_GT(p.tpot_p50_s, top.tpot_p50_s);
    }
  }
  ServingSimOptions bad = o;
  bad.prefill_replicas = 3;  // no decode replica left
  auto refused = run_serving_experiment(*trace, bad);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("--prefill-replicas"), std::string::npos);
  bad.prefill_replicas = 1;
  bad.kv_transfer_s_per_token = -1;
  EXPECT_FALSE(run_serving_experiment(*trace, bad).has_value());
}

}  // namespace
}  // namespace zeus::sim
