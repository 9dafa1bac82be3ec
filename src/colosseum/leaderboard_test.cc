#include "colosseum/leaderboard.h"

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

// The tally as votes come (a response vote, then the energy vote apart) gives the same table as
// the stored duels read at once, for many votes, from per-model sums only.
TEST(LeaderboardTest, TheTallyAsVotesComeMatchesTheStoredDuels) {
  const std::vector<std::string> models = {"a", "b", "c"};
  std::vector<store::DuelRecord> stored;
  LeaderboardTally tally;
  for (int i = 0; i < 20000; ++i) {
    const int worth = i % 3 == 0 ? -1 : i % 2;
    store::DuelRecord d =
        duel(models[i % 3], models[(i + 1) % 3], 10 + i % 7, 10 + i % 5, i % 2, worth);
    stored.push_back(d);
    d.is_worth = -1;  // the response vote first
    tally.vote(d);
    if (worth >= 0) tally.energy_vote(d.models, d.energy_j, d.victory_index, worth == 1);
  }
  const std::vector<LeaderboardRow> expected = leaderboard(stored);
  const std::vector<LeaderboardRow> got = tally.rows();
  EXPECT_EQ(tally.duels(), 20000);
  ASSERT_EQ(got.size(), expected.size());
  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].model, expected[i].model);
    EXPECT_EQ(got[i].duels, expected[i].duels);
    EXPECT_EQ(got[i].wins, expected[i].wins);
    EXPECT_EQ(got[i].energy_votes, expected[i].energy_votes);
    EXPECT_EQ(got[i].worth, expected[i].worth);
    EXPECT_DOUBLE_EQ(got[i].energy_per_answer_j, expected[i].energy_per_answer_j);
    EXPECT_GT(got[i].energy_votes, 0);
  }
  tally.energy_vote({"unknown", "a"}, {20, 10}, 0, true);  // no response vote counted: ignored
  EXPECT_EQ(tally.rows().size(), 3u);
}

}  // namespace
}  // namespace zeus::proxy
