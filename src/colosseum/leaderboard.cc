#include "colosseum/leaderboard.h"

#include <algorithm>

namespace zeus::proxy {

void LeaderboardTally::vote(const store::DuelRecord& d) {
  ++duels_;
  if (d.victory_index != 0 && d.victory_index != 1) return;
  for (int side = 0; side < 2; ++side) {
    Sums& s = by_model_[d.models[side]];
    s.row.model = d.models[side];
    ++s.row.duels;
    s.energy_j += d.energy_j[side];
    s.tokens += d.tokens[side];
    if (side == d.victory_index) ++s.row.wins;
  }
  if (d.is_worth >= 0) energy_vote(d.models, d.energy_j, d.victory_index, d.is_worth == 1);
}

void LeaderboardTally::energy_vote(const std::array<std::string, 2>& models,
                                   const std::array<double, 2>& energy_j, int victory_index,
                                   bool is_worth) {
  if (victory_index != 0 && victory_index != 1) return;
  if (!(energy_j[victory_index] > energy_j[1 - victory_index])) return;
  auto it = by_model_.find(models[victory_index]);
  if (it == by_model_.end()) return;  // its response vote was not counted
  Sums& s = it->second;
  ++s.row.energy_votes;
  s.row.worth += is_worth ? 1 : 0;
}

std::vector<LeaderboardRow> leaderboard(const std::vector<store::DuelRecord>& duels) {
  LeaderboardTally tally;
  for (const store::DuelRecord& d : duels) tally.vote(d);
  return tally.rows();
}

std::vector<LeaderboardRow> LeaderboardTally::rows() const {
  std::vector<LeaderboardRow> out;
  for (const auto& [model, s] : by_model_) {
    LeaderboardRow row = s.row;
    row.win_rate = static_cast<double>(row.wins) / static_cast<double>(row.duels);
    row.energy_per_answer_j = s.energy_j / static_cast<double>(row.duels);
    row.energy_per_token_j = s.tokens > 0 ? s.energy_j / static_cast<double>(s.tokens) : 0;
    row.worth_rate = row.energy_votes > 0
                         ? static_cast<double>(row.worth) / static_cast<double>(row.energy_votes)
                         : -1;
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const LeaderboardRow& a, const LeaderboardRow& b) {
    if (a.win_rate != b.win_rate) return a.win_rate > b.win_rate;
    return a.energy_per_answer_j < b.energy_per_answer_j;
  });
  return out;
}

}  // namespace zeus::proxy
