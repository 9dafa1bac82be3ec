#include <gtest/gtest.h>

#include <cmath>

#include "perseus/planner/test_data.h"
#include "zeus/perseus/pfo_planner.h"

namespace zeus::pfo {
namespace {

using testing::load_frontier;
using testing::load_profile;

// SciPy's curve_fit (Levenberg-Marquardt, the reference planner's start grid and "best"
// strategy) on the GPT-3 175B A100 SXM profile, unit 1 ms, P_b 83.64 W: full-precision
// coefficients and mean squared errors, computed once for this test.
struct ReferenceFit {
  int stage;
  InstructionKind kind;
  std::size_t num_options;
  ExponentialCost cost;
  double mse;
};
const std::vector<ReferenceFit> kReferenceFits = [] {
  std::vector<ReferenceFit> fits;
  for (int stage = 0; stage < 7; ++stage) {
    fits.push_back({stage,
                    InstructionKind::kForward,
                    13,
                    {15184.200984229645, -0.14950104407701414, 10.939907858063135},
                    0.006953328680224748});
    fits.push_back({stage,
                    InstructionKind::kBackward,
                    18,
                    {53373.139552248635, -0.08757836155084228, 20.452832912955316},
                    0.1006818054235531});
  }
  fits.push_back({7,
                  InstructionKind::kForward,
                  12,
                  {13748.801927731725, -0.1354434735340325, 11.119447081954803},
                  0.025039866548884973});
  fits.push_back({7,
                  InstructionKind::kBackward,
                  20,
                  {32397.65907995576, -0.07641848104575638, 20.423359213689697},
                  0.06938731836239835});
  return fits;
}();

PlannerOptions gpt3_a100_options() {
  PlannerOptions options;
  options.num_stages = 8;
  options.num_microbatches = 12;
  options.p2p_power_w = 83.64;
  options.unit_time_s = 0.001;
  return options;
}

void expect_matches_published(const Frontier& frontier, double energy_tolerance) {
  const auto published = load_frontier("a100_sxm/gpt3-175b_bf16_mb12.csv");
  ASSERT_EQ(frontier.points().size(), published.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < published.size(); ++i) {
    ASSERT_DOUBLE_EQ(frontier.points()[i].time_s, published[i].first) << "row " << i;
    worst = std::max(worst, std::abs(frontier.points()[i].energy_j / published[i].second - 1.0));
  }
  EXPECT_LE(worst, energy_tolerance);
  ::testing::Test::RecordProperty("worst_relative_energy_error", std::to_string(worst));
}

// The planner's size is known before any step, and jobs beyond its bounds are
// refused at once (the 2 x 20,000 microbatch job used to overflow the stack, and would take the
// better part of an hour).
TEST(PlanSize, JobsBeyondTheBoundsAreRefusedBeforeAnyStep) {
  auto gpt3 = plan_size(load_profile("gpt3-175b+a100_sxm_bf16"), gpt3_a100_options());
  ASSERT_TRUE(gpt3) << gpt3.error().to_string();
  EXPECT_EQ(gpt3->instructions, 192);
  EXPECT_EQ(gpt3->plans, 3457 - 2818);
  EXPECT_TRUE(check_plan_size(*gpt3));

  PlannerOptions tiny;
  tiny.num_stages = 2;
  tiny.num_microbatches = 20000;
  tiny.p2p_power_w = testing::kTinyBlockingW;
  auto size = plan_size(testing::tiny_profile(), tiny);
  ASSERT_TRUE(size);
  EXPECT_EQ(size->instructions, 80000);
  EXPECT_GT(size->work(), kMaxPlanWork);
  auto refused = plan_frontier(testing::tiny_profile(), tiny);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("more than the 1000000000"), std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find("use fewer --microbatches or a larger --unit"),
            std::string::npos);

  PlannerOptions wide = gpt3_a100_options();
  wide.num_microbatches = 100000;
  auto too_many = validate_planner_options(load_profile("gpt3-175b+a100_sxm_bf16"), wide);
  ASSERT_FALSE(too_many);
  EXPECT_NE(too_many.error().message.find("more than the 200000"), std::string::npos)
      << too_many.error().message;
  EXPECT_FALSE(check_plan_size({kMaxPlanInstructions, kMaxPlans + 1}));
}

TEST(PlannerGolden, PublishedGpt3A100FrontierWithOurFit) {
  auto frontier = plan_frontier(load_profile("gpt3-175b+a100_sxm_bf16"), gpt3_a100_options());
  ASSERT_TRUE(frontier) << frontier.error().to_string();
  EXPECT_EQ(frontier->max_quant_time(), 3457);
  EXPECT_EQ(frontier->min_quant_time(), 2818);
  expect_matches_published(*frontier, 1e-4);
}

TEST(PlannerGolden, PublishedGpt3A100FrontierWithInjectedCoefficients) {
  PlannerOptions options = gpt3_a100_options();
  for (const ReferenceFit& fit : kReferenceFits) {
    options.injected_costs[{fit.stage, fit.kind}] = fit.cost;
  }
  auto frontier = plan_frontier(load_profile("gpt3-175b+a100_sxm_bf16"), options);
  ASSERT_TRUE(frontier) << frontier.error().to_string();
  expect_matches_published(*frontier, 1e-9);
}

TEST(PlannerGolden, OurFitIsAsGoodAsTheReferenceFit) {
  auto frontier = plan_frontier(load_profile("gpt3-175b+a100_sxm_bf16"), gpt3_a100_options());
  ASSERT_TRUE(frontier) << frontier.error().to_string();
  for (const ReferenceFit& fit : kReferenceFits) {
    const OperationModel& model = frontier->model(fit.stage, fit.kind);
    EXPECT_EQ(model.options.size(), fit.num_options);
    EXPECT_LE(model.fit_mse, fit.mse * (1.0 + 1e-9)) << "stage " << fit.stage;
    EXPECT_NEAR(model.cost.a / fit.cost.a, 1.0, 1e-5);
    EXPECT_NEAR(model.cost.b / fit.cost.b, 1.0, 1e-5);
    EXPECT_NEAR(model.cost.c / fit.cost.c, 1.0, 1e-5);
  }
}

}  // namespace
}  // namespace zeus::pfo
