// The Colosseum's leaderboard: from every recorded duel, per model the duels it played, its win
// rate (response votes won / duels), its mean energy per answer (J/answer) and per output token,
// and its "worth it" rate: of the duels it won with the answer that used more energy and whose
// voter then cast the energy vote, the share voted "worth it". Pure: rows in, table out; models
// sorted by win rate, then by lower J/answer.
//
//   std::vector<LeaderboardRow> rows = leaderboard(votes->all().value());
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/vote_store.h"

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

std::vector<LeaderboardRow> leaderboard(const std::vector<store::DuelRecord>& duels);

}  // namespace zeus::proxy
