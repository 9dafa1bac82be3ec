// VoteStore: the Colosseum's votes in SQLite (`zeus proxy --votes FILE`): one row per duel that
// got its response vote (which model answered on each side, each answer's energy and tokens, the
// side chosen), later completed by the energy vote ("was the extra energy worth it"). The
// leaderboard (src/colosseum/leaderboard.h, which the Colosseum computes) is computed from all rows.
// Fails: open() with kUnavailable when the file cannot be opened or is not a votes database;
// writes with kUnavailable when the database is busy or the disk is full.
// Thread-safety: every method from any thread (one connection under a mutex).
//
//   auto votes = VoteStore::open("votes.db");
//   (*votes)->record_vote(record); (*votes)->record_energy_vote("r1", true);
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zeus/common/result.h"

namespace zeus::store {

struct DuelRecord {
  std::string request_id;
  std::array<std::string, 2> models;  // the model on each side
  std::array<double, 2> energy_j{};
  std::array<int64_t, 2> tokens{};
  int victory_index = 0;
  int is_worth = -1;  // -1: no energy vote, 0: not worth it, 1: worth it
  double voted_unix_s = 0;
};

class VoteStore {
 public:
  // Opens (creating when missing) the database at `path` (":memory:" for a private one).
  static Result<std::unique_ptr<VoteStore>> open(const std::string& path);
  virtual ~VoteStore() = default;
  // Inserts the duel's row; InvalidArgument when the request_id has a row already.
  virtual Result<void> record_vote(const DuelRecord& record) = 0;
  // Sets the duel's energy vote; NotFound when it has no row.
  virtual Result<void> record_energy_vote(const std::string& request_id, bool is_worth) = 0;
  // Every row, oldest first.
  virtual Result<std::vector<DuelRecord>> all() = 0;
};

}  // namespace zeus::store
