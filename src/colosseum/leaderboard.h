// The Colosseum's leaderboard: from every recorded duel, per model the duels it played, its win
// rate (response votes won / duels), its mean energy per answer (J/answer) and per output token,
// and its "worth it" rate: of the duels it won with the answer that used more energy and whose
// voter then cast the energy vote, the share voted "worth it". Pure: rows in, table out; models
// sorted by win rate, then by lower J/answer. LeaderboardTally keeps the same sums as the votes
// come, so a long-running Colosseum answers its leaderboard from per-model sums (memory bounded by
// the models, not the votes) instead of reading every stored duel again.
//
//   std::vector<LeaderboardRow> rows = leaderboard(votes->all().value());
//   LeaderboardTally tally; tally.vote(record); tally.energy_vote(models, energy_j, 0, true);
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "store/sqlite/vote_store.h"

namespace zeus::proxy {

struct LeaderboardRow {
  std::string model;
  int64_t duels = 0;
  int64_t wins = 0;
  double win_rate = 0;             // wins / duels
  double energy_per_answer_j = 0;  // mean over its answers
  double energy_per_token_j = 0;   // its answers' energy / their tokens (0 without tokens)
  int64_t energy_votes = 0;        // won with more energy, and the energy vote was cast
  int64_t worth = 0;               // ... of which "worth it"
  double worth_rate = -1;          // worth / energy_votes; -1 when no energy vote
};

class LeaderboardTally {
 public:
  // A duel's response vote (with its energy vote when is_worth >= 0).
  void vote(const store::DuelRecord& duel);
  // The energy vote cast later on a duel already counted by vote().
  void energy_vote(const std::array<std::string, 2>& models, const std::array<double, 2>& energy_j,
                   int victory_index, bool is_worth);
  std::vector<LeaderboardRow> rows() const;
  int64_t duels() const { return duels_; }  // every vote() so far

 private:
  struct Sums {
    LeaderboardRow row;
    double energy_j = 0;
    int64_t tokens = 0;
  };
  std::map<std::string, Sums> by_model_;
  int64_t duels_ = 0;
};

std::vector<LeaderboardRow> leaderboard(const std::vector<store::DuelRecord>& duels);

}  // namespace zeus::proxy
