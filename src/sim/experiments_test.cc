#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/experiments_fixture.h"
#include "zeus/sim/sim_experiments.h"
#include "zeus/sim/sim_report.h"
#include "zeus/sim/simulator.h"

namespace zeus::sim {
namespace {

namespace fs = std::filesystem;
using testing::ExperimentsTest;

TEST_F(ExperimentsTest, HeadlineRatiosAreAgainstDefaultAndOracleMatchesOptimum) {
  auto result = run_headline(options_);
  ASSERT_TRUE(result.has_value()) << result.error().to_string();
  ASSERT_EQ(result->workloads.size(), 1u);
  const WorkloadHeadline& w = result->workloads[0];
  EXPECT_EQ(w.recurrences, 2 * 3 * 3);
  ASSERT_EQ(w.policies.size(), 5u);
  EXPECT_EQ(w.policies[0].policy, PolicyKind::kDefault);
  EXPECT_DOUBLE_EQ(w.policies[0].cum_energy_ratio.mean, 1.0);
  EXPECT_DOUBLE_EQ(w.policies[0].last5_time_ratio.mean, 1.0);
  EXPECT_EQ(w.policies[0].converged_batch_size, 32);
  EXPECT_DOUBLE_EQ(w.policies[0].converged_power_limit_w, 250.0);
  const PolicyHeadline& oracle = w.policies[3];
  EXPECT_EQ(oracle.policy, PolicyKind::kOracle);
  EXPECT_EQ(oracle.converged_batch_size, w.oracle_all_paths_batch_size);
  EXPECT_DOUBLE_EQ(oracle.converged_power_limit_w, w.oracle_all_paths_power_limit_w);
  const PolicyHeadline& expected = w.policies[4];
  EXPECT_EQ(expected.policy, PolicyKind::kOracleExpected);
  EXPECT_EQ(expected.converged_batch_size, w.oracle_batch_size);
  EXPECT_DOUBLE_EQ(expected.converged_power_limit_w, w.oracle_power_limit_w);
  EXPECT_EQ(w.oracle_batch_size, 64);  // fewest epochs and fastest epochs
  EXPECT_EQ(w.oracle_all_paths_batch_size, 64);  // and every path of 64 reaches the target
  // The regret against the (costlier or equal) paper's Oracle is lower or equal.
  EXPECT_LE(w.policies[2].cum_regret_vs_oracle_j.mean, w.policies[2].cum_regret_j.mean + 1e-6);
  // Default always exceeds the Oracle's expectation here: its regret is positive and grows.
  EXPECT_GT(w.policies[0].cum_regret_j.mean, 0.0);
  EXPECT_LT(w.policies[0].mean_cum_regret_j.front(), w.policies[0].mean_cum_regret_j.back());
  // Zeus ends on the Oracle's configuration on this easy trace.
  EXPECT_EQ(w.policies[2].converged_batch_size, 64);
  EXPECT_LT(w.policies[2].last5_energy_ratio.mean, 1.0);
}

// The regret curves carry their seeds' spread, drawn as a band.
TEST_F(ExperimentsTest, RegretCurvesCarryTheSeedSpreadAsBands) {
  auto result = run_headline(options_);
  ASSERT_TRUE(result.has_value());
  const WorkloadHeadline& w = result->workloads[0];
  const PolicyHeadline& zeus = w.policies[2];
  ASSERT_EQ(zeus.sd_cum_regret_j.size(), zeus.mean_cum_regret_j.size());
  EXPECT_GT(zeus.sd_cum_regret_j.back(), 0.0);  // seeds explore differently
  for (double sd : w.policies[0].sd_cum_regret_j) EXPECT_GE(sd, 0.0);
  ASSERT_TRUE(write_headline_report(*result, dir_ / "r", ReportOptions{"none"}).has_value());
  std::istringstream csv(read(dir_ / "r" / "regret_squad.csv"));
  std::string header, last, line;
  std::getline(csv, header);
  EXPECT_NE(header.find("Zeus,Zeus low,Zeus high"), std::string::npos) << header;
  while (std::getline(csv, line)) last = line;
  // The last row's Zeus columns: mean - sd, mean, mean + sd in order, sd as computed.
  std::vector<double> cells;
  std::istringstream row(last);
  for (std::string cell; std::getline(row, cell, ',');) cells.push_back(std::stod(cell));
  ASSERT_EQ(cells.size(), 1 + 3 * w.policies.size());
  const double mean = cells[1 + 3 * 2], low = cells[2 + 3 * 2], high = cells[3 + 3 * 2];
  EXPECT_NEAR(mean, zeus.mean_cum_regret_j.back() / 1e6, 1e-6);
  EXPECT_NEAR(high - mean, zeus.sd_cum_regret_j.back() / 1e6, 1e-5);
  EXPECT_NEAR(mean - low, zeus.sd_cum_regret_j.back() / 1e6, 1e-5);
  EXPECT_NE(read(dir_ / "r" / "regret_squad.gp").find("filledcurves"), std::string::npos);
}

TEST_F(ExperimentsTest, SameSeedGivesByteIdenticalReports) {
  ReportOptions no_plots{"none"};
  auto a = run_headline(options_);
  auto b = run_headline(options_);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(format_headline_table(*a), format_headline_table(*b));
  ASSERT_TRUE(write_headline_report(*a, dir_ / "a", no_plots).has_value());
  ASSERT_TRUE(write_headline_report(*b, dir_ / "b", no_plots).has_value());
  for (const char* name : {"headline.csv", "index.md", "index.html", "regret_squad.csv", "energy_last5.gp"}) {
    EXPECT_EQ(read(dir_ / "a" / name), read(dir_ / "b" / name)) << name;
    EXPECT_FALSE(read(dir_ / "a" / name).empty()) << name;
  }
  options_.sim.seed = 7;
  auto c = run_headline(options_);
  ASSERT_TRUE(c.has_value());
  EXPECT_NE(format_headline_table(*a), format_headline_table(*c));
}

TEST_F(ExperimentsTest, ReportWithoutGnuplotKeepsDataAndSaysHowToRender) {
  auto result = run_headline(options_);
  ASSERT_TRUE(result.has_value());
  auto dir = write_headline_report(*result, dir_ / "report", ReportOptions{"/nonexistent/gnuplot"});
  ASSERT_TRUE(dir.has_value()) << dir.error().to_string();
  EXPECT_TRUE(fs::exists(dir_ / "report" / "headline.csv"));
  EXPECT_TRUE(fs::exists(dir_ / "report" / "regret_squad.gp"));
  EXPECT_FALSE(fs::exists(dir_ / "report" / "regret_squad.svg"));
  EXPECT_NE(read(dir_ / "report" / "index.md").find("gnuplot was not found"), std::string::npos);
  // A second report replaces the first; nothing else is left beside it.
  ASSERT_TRUE(write_headline_report(*result, dir_ / "report", ReportOptions{"none"}).has_value());
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) entries += entry.path().filename() != "data" ? 1 : 0;
  EXPECT_EQ(entries, 1);
}

TEST_F(ExperimentsTest, ReportRefusesToReplaceAFolderThatIsNotAReport) {
  fs::create_directories(dir_ / "mine");
  write(dir_ / "mine" / "notes.txt", "keep me");
  auto result = run_headline(options_);
  ASSERT_TRUE(result.has_value());
  auto dir = write_headline_report(*result, dir_ / "mine", ReportOptions{"none"});
  ASSERT_FALSE(dir.has_value());
  EXPECT_NE(dir.error().message.find("is not a zeus report"), std::string::npos);
  EXPECT_EQ(read(dir_ / "mine" / "notes.txt"), "keep me");
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) entries += entry.path().filename() != "data" ? 1 : 0;
  EXPECT_EQ(entries, 1);  // no temporary folder left behind
}

TEST_F(ExperimentsTest, BadInputIsOneClearError) {
  options_.sim.eta = -0.1;
  auto eta = run_headline(options_);
  ASSERT_FALSE(eta.has_value());
  EXPECT_NE(eta.error().message.find("eta must be in [0, 1]"), std::string::npos);
  options_.sim.eta = 0.5;
  options_.workloads = {"mnist"};
  EXPECT_FALSE(run_headline(options_).has_value());
  options_.workloads = {"squad"};
  options_.gpu = "h100";
  EXPECT_FALSE(run_pareto(options_).has_value());
  options_.gpu = "v100";
  write(dir_ / "data" / "summary_power_v100.csv", "dataset,network,batch_size\nsquad,bert,32\n");
  auto columns = run_headline(options_);
  ASSERT_FALSE(columns.has_value());
  EXPECT_NE(columns.error().message.find("missing column(s) optimizer, power_limit"), std::string::npos);
}

TEST_F(ExperimentsTest, ParetoMarksFrontierDefaultAndOptimum) {
  auto result = run_pareto(options_);
  ASSERT_TRUE(result.has_value()) << result.error().to_string();
  const WorkloadPareto& w = result->workloads[0];
  EXPECT_EQ(w.points.size(), 9u);
  int defaults = 0, optima = 0;
  for (const ParetoPoint& p : w.points) {
    defaults += p.is_default;
    optima += p.is_optimum;
    if (p.is_default) {
      EXPECT_EQ(p.batch_size, 32);
      EXPECT_DOUBLE_EQ(p.power_limit_w, 250.0);
    }
    for (const ParetoPoint& o : w.points) {
      if (p.on_frontier) {
        EXPECT_FALSE(o.tta_s < p.tta_s && o.eta_j < p.eta_j);
      }
    }
  }
  EXPECT_EQ(defaults, 1);
  EXPECT_EQ(optima, 1);
  auto dir = write_pareto_report(*result, dir_ / "pareto", ReportOptions{"none"});
  ASSERT_TRUE(dir.has_value());
  EXPECT_TRUE(fs::exists(dir_ / "pareto" / "pareto_squad_frontier.csv"));
  EXPECT_TRUE(fs::exists(dir_ / "pareto" / "eta_vs_power_squad.csv"));
}

}  // namespace
}  // namespace zeus::sim
