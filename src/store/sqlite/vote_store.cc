#include "store/sqlite/vote_store.h"

#include <sqlite3.h>

#include <mutex>

#include "store/sqlite/sqlite_statement.h"

namespace zeus::store {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS duels (
  request_id    TEXT PRIMARY KEY,
  model_0       TEXT NOT NULL,
  model_1       TEXT NOT NULL,
  energy_0_j    REAL NOT NULL,
  energy_1_j    REAL NOT NULL,
  tokens_0      INTEGER NOT NULL,
  tokens_1      INTEGER NOT NULL,
  victory_index INTEGER NOT NULL CHECK (victory_index IN (0, 1)),
  is_worth      INTEGER CHECK (is_worth IN (0, 1)),
  voted_unix_s  REAL NOT NULL
);)sql";

class SqliteVoteStore final : public VoteStore {
 public:
  explicit SqliteVoteStore(sqlite3* db) : db_(db) {}
  ~SqliteVoteStore() override { sqlite3_close_v2(db_); }

  Result<void> record_vote(const DuelRecord& r) override {
    std::lock_guard<std::mutex> lock(mu_);
    Statement st(db_,
                 "INSERT INTO duels (request_id, model_0, model_1, energy_0_j, energy_1_j, "
                 "tokens_0, tokens_1, victory_index, is_worth, voted_unix_s) "
                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    if (!st.ok()) return sqlite_error(db_, "preparing a vote");
    st.bind(1, r.request_id);
    st.bind(2, r.models[0]);
    st.bind(3, r.models[1]);
    st.bind(4, r.energy_j[0]);
    st.bind(5, r.energy_j[1]);
    st.bind(6, r.tokens[0]);
    st.bind(7, r.tokens[1]);
    st.bind(8, r.victory_index);
    if (r.is_worth >= 0) st.bind(9, r.is_worth);
    st.bind(10, r.voted_unix_s);
    const int rc = st.step();
    if (rc == SQLITE_CONSTRAINT) {
      return fail(ErrorCode::kInvalidArgument,
                  "duel '" + r.request_id + "' has a vote recorded already");
    }
    if (rc != SQLITE_DONE) return sqlite_error(db_, "recording a vote");
    return ok();
  }

  Result<void> record_energy_vote(const std::string& request_id, bool is_worth) override {
    std::lock_guard<std::mutex> lock(mu_);
    Statement st(db_, "UPDATE duels SET is_worth = ?2 WHERE request_id = ?1");
    if (!st.ok()) return sqlite_error(db_, "preparing an energy vote");
    st.bind(1, request_id);
    st.bind(2, is_worth ? 1 : 0);
    if (st.step() != SQLITE_DONE) return sqlite_error(db_, "recording an energy vote");
    if (sqlite3_changes(db_) == 0) {
      return fail(ErrorCode::kNotFound, "duel '" + request_id + "' has no recorded vote");
    }
    return ok();
  }

  Result<std::vector<DuelRecord>> all() override {
    std::lock_guard<std::mutex> lock(mu_);
    Statement st(db_,
                 "SELECT request_id, model_0, model_1, energy_0_j, energy_1_j, tokens_0, "
                 "tokens_1, victory_index, coalesce(is_worth, -1), voted_unix_s FROM duels "
                 "ORDER BY voted_unix_s, rowid");
    if (!st.ok()) return sqlite_error(db_, "preparing to read the votes");
    std::vector<DuelRecord> out;
    int rc;
    while ((rc = st.step()) == SQLITE_ROW) {
      DuelRecord r;
      r.request_id = st.text(0);
      r.models = {st.text(1), st.text(2)};
      r.energy_j = {st.real(3), st.real(4)};
      r.tokens = {st.integer(5), st.integer(6)};
      r.victory_index = static_cast<int>(st.integer(7));
      r.is_worth = static_cast<int>(st.integer(8));
      r.voted_unix_s = st.real(9);
      out.push_back(std::move(r));
    }
    if (rc != SQLITE_DONE) return sqlite_error(db_, "reading the votes");
    return out;
  }

 private:
  std::mutex mu_;
  sqlite3* db_;
};

}  // namespace

Result<std::unique_ptr<VoteStore>> VoteStore::open(const std::string& path) {
  Result<sqlite3*> opened = sqlite_open(path, "votes");
  if (!opened) return fail(opened.error());
  sqlite3* db = *opened;
  auto store = std::make_unique<SqliteVoteStore>(db);  // closes db on every exit below
  sqlite3_busy_timeout(db, 5000);
  if (path != ":memory:") {
    Statement wal(db, "PRAGMA journal_mode = WAL");
    if (!wal.ok() || wal.step() != SQLITE_ROW) {
      return fail(ErrorCode::kUnavailable,
                  "votes: '" + path + "' is not an SQLite database: " + sqlite3_errmsg(db) +
                      "; give --votes a new file or one this command wrote");
    }
  }
  Result<void> schema = sqlite_exec(db, kSchema, "creating the votes table");
  if (!schema) {
    return fail(ErrorCode::kUnavailable, "votes: '" + path + "': " + schema.error().message +
                                             "; give --votes a new file or one this command wrote");
  }
  return std::unique_ptr<VoteStore>(std::move(store));
}

}  // namespace zeus::store
