// The compact plan store: every plan of a real frontier reads back exactly, from any checkpoint
// interval, and damaged or foreign files are clear errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "zeus/perseus/pfo_plan_store.h"
#include "zeus/perseus/sim_perseus.h"

namespace zeus::pfo {
namespace {

namespace fs = std::filesystem;

class PlanStoreTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::ifstream in(fs::path(ZEUS_SOURCE_DIR) / "data" / "perseus" / "stage_profile" /
                     "gpt3-175b+a100_sxm_bf16.csv");
    std::stringstream text;
    text << in.rdbuf();
    profile_ = new StageProfile(*parse_stage_profile(text.str(), "gpt3"));
    PlannerOptions options;
    options.num_stages = 8;
    options.num_microbatches = 12;
    options.p2p_power_w = 83.64;
    frontier_ = new Frontier(*plan_frontier(*profile_, options));
  }
  static void TearDownTestSuite() {
    delete frontier_;
    delete profile_;
  }
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("zeus-plan-store-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static StageProfile* profile_;
  static Frontier* frontier_;
  fs::path dir_;
};
StageProfile* PlanStoreTest::profile_ = nullptr;
Frontier* PlanStoreTest::frontier_ = nullptr;

TEST_F(PlanStoreTest, EveryPlanReadsBackExactlyAtEveryCheckpointInterval) {
  auto global = sim::global_clock_runs(*profile_, frontier_->schedule(), 83.64);
  ASSERT_TRUE(global);
  std::vector<GlobalClockPlan> clocks;
  for (const auto& run : *global) clocks.push_back(run.plan);
  for (uint32_t interval : {1u, 7u, 256u, 100000u}) {
    const fs::path path = dir_ / ("plans" + std::to_string(interval) + ".bin");
    ASSERT_TRUE(write_plan_store(path, *frontier_, clocks, interval));
    auto store = PlanStore::open(path);
    ASSERT_TRUE(store) << store.error().to_string();
    ASSERT_EQ(store->points().size(), 639u);
    EXPECT_EQ(store->num_stages(), 8);
    EXPECT_EQ(store->num_microbatches(), 12);
    EXPECT_DOUBLE_EQ(store->p2p_power_w(), 83.64);
    EXPECT_DOUBLE_EQ(store->unit_s(), 0.001);
    EXPECT_EQ(store->kinds()[3].size(), 24u);
    EXPECT_EQ(store->kinds()[0][0], InstructionKind::kForward);
    EXPECT_EQ(store->all_slowest_clocks_mhz(), frontier_->all_slowest_clocks_mhz());
    EXPECT_DOUBLE_EQ(store->all_slowest().energy_j, frontier_->all_slowest().energy_j);
    ASSERT_EQ(store->global_clocks().size(), clocks.size());
    EXPECT_EQ(store->global_clocks()[5].clock_mhz, clocks[5].clock_mhz);
    EXPECT_DOUBLE_EQ(store->global_clocks()[5].energy_j, clocks[5].energy_j);
    for (std::size_t i = 0; i < 639; ++i) {
      EXPECT_EQ(store->points()[i].quant_time, frontier_->points()[i].quant_time);
      EXPECT_DOUBLE_EQ(store->points()[i].energy_j, frontier_->points()[i].energy_j);
      auto plan = store->clocks_mhz(i);
      ASSERT_TRUE(plan) << plan.error().to_string();
      ASSERT_EQ(*plan, frontier_->clocks_mhz(i)) << "plan " << i << " interval " << interval;
    }
    std::size_t seen = 0;
    ASSERT_TRUE(store->for_each_plan([&](std::size_t i, const std::vector<std::vector<int>>& c) {
      EXPECT_EQ(i, seen++);
      EXPECT_EQ(c, frontier_->clocks_mhz(i));
    }));
    EXPECT_EQ(seen, 639u);
  }
}

TEST_F(PlanStoreTest, StoresChangesNotWholePlans) {
  const fs::path path = dir_ / "plans.bin";
  ASSERT_TRUE(write_plan_store(path, *frontier_, {}));
  // 639 plans x 192 instructions as u16 would be 245 kB; the changes are far fewer.
  EXPECT_LT(fs::file_size(path), 639u * 192u * 2u / 4u);
}

TEST_F(PlanStoreTest, BadFilesAreClearErrors) {
  auto missing = PlanStore::open(dir_ / "none.bin");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find("zeus pfo plan"), std::string::npos);

  std::ofstream(dir_ / "plans.jsonl") << "{\"index\": 0}\n";
  auto foreign = PlanStore::open(dir_ / "plans.jsonl");
  ASSERT_FALSE(foreign);
  EXPECT_NE(foreign.error().message.find("not a plan store"), std::string::npos);

  const fs::path path = dir_ / "plans.bin";
  ASSERT_TRUE(write_plan_store(path, *frontier_, {}));
  auto store = PlanStore::open(path);
  ASSERT_TRUE(store);
  auto beyond = store->clocks_mhz(639);
  ASSERT_FALSE(beyond);
  EXPECT_NE(beyond.error().message.find("plans 0 to 638"), std::string::npos);
  // Cut short at several places: never a crash, always the same clear error.
  const auto size = fs::file_size(path);
  for (std::uintmax_t keep : {size - 1, size / 2, std::uintmax_t{40}, std::uintmax_t{12}}) {
    fs::copy_file(path, dir_ / "cut.bin", fs::copy_options::overwrite_existing);
    fs::resize_file(dir_ / "cut.bin", keep);
    auto cut = PlanStore::open(dir_ / "cut.bin");
    ASSERT_FALSE(cut) << keep;
    EXPECT_NE(cut.error().message.find("cut short or damaged"), std::string::npos) << keep;
  }
}

}  // namespace
}  // namespace zeus::pfo
