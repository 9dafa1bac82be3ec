#include "proxy/leaderboard.h"

#include <gtest/gtest.h>

namespace zeus::proxy {
namespace {

store::DuelRecord duel(std::string m0, std::string m1, double e0, double e1, int winner,
                       int worth = -1) {
  store::DuelRecord d;
  d.request_id = m0 + m1 + std::to_string(e0) + std::to_string(e1);
  d.models = {std::move(m0), std::move(m1)};
  d.energy_j = {e0, e1};
  d.tokens = {10, 20};
  d.victory_index = winner;
  d.is_worth = worth;
  return d;
}

TEST(LeaderboardTest, WinRateEnergyAndWorthRatePerModel) {
  // big wins twice with more energy (worth it once, not once), small wins once with less.
  const std::vector<store::DuelRecord> duels = {
      duel("big", "small", 30, 10, 0, 1),
      duel("small", "big", 12, 36, 1, 0),
      duel("small", "big", 8, 24, 0),
  };
  const std::vector<LeaderboardRow> rows = leaderboard(duels);
  ASSERT_EQ(rows.size(), 2u);
  const LeaderboardRow& big = rows[0];
  EXPECT_EQ(big.model, "big");
  EXPECT_EQ(big.duels, 3);
  EXPECT_EQ(big.wins, 2);
  EXPECT_NEAR(big.win_rate, 2.0 / 3, 1e-12);
  EXPECT_NEAR(big.energy_per_answer_j, 30, 1e-12);
  EXPECT_NEAR(big.energy_per_token_j, 90.0 / 50, 1e-12);  // tokens 10 + 20 + 20
  EXPECT_EQ(big.energy_votes, 2);
  EXPECT_EQ(big.worth, 1);
  EXPECT_NEAR(big.worth_rate, 0.5, 1e-12);
  const LeaderboardRow& small = rows[1];
  EXPECT_EQ(small.wins, 1);
  EXPECT_NEAR(small.energy_per_answer_j, 10, 1e-12);
  EXPECT_EQ(small.energy_votes, 0);  // it won with less energy: no energy vote
  EXPECT_EQ(small.worth_rate, -1);
}

TEST(LeaderboardTest, EqualWinRatesRankTheCheaperFirstAndEmptyIsEmpty) {
  const std::vector<LeaderboardRow> rows =
      leaderboard({duel("x", "y", 50, 5, 0), duel("x", "y", 50, 5, 1)});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].model, "y");
  EXPECT_TRUE(leaderboard({}).empty());
}

}  // namespace
}  // namespace zeus::proxy
