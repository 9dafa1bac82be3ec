#include "proxy/leaderboard.h"

#include <algorithm>
#include <map>

namespace zeus::proxy {

std::vector<LeaderboardRow> leaderboard(const std::vector<store::DuelRecord>& duels) {
  struct Sums {
    LeaderboardRow row;
    double energy_j = 0;
    int64_t tokens = 0;
  };
  std::map<std::string, Sums> by_model;
  for (const store::DuelRecord& d : duels) {
    if (d.victory_index != 0 && d.victory_index != 1) continue;
    for (int side = 0; side < 2; ++side) {
      Sums& s = by_model[d.models[side]];
      s.row.model = d.models[side];
      ++s.row.duels;
      s.energy_j += d.energy_j[side];
      s.tokens += d.tokens[side];
      if (side != d.victory_index) continue;
      ++s.row.wins;
      if (d.energy_j[side] > d.energy_j[1 - side] && d.is_worth >= 0) {
        ++s.row.energy_votes;
        s.row.worth += d.is_worth;
      }
    }
  }
  std::vector<LeaderboardRow> out;
  for (auto& [model, s] : by_model) {
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
