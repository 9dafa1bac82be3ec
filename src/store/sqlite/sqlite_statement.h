// SQLite plumbing for SqliteStore (store-internal): a connection's cache of prepared statements
// and a Statement handle that binds, steps and reads columns.
//
// Preparing a statement costs more than running the small ones a transaction runs, so each is
// prepared once per connection (SQLITE_PREPARE_PERSISTENT) and reset after each use.
// Thread-safety: none; one connection's statements are used under the owner's lock.
//
//   StatementCache cache(db, kSqlText);           // kSqlText: the statements, by index
//   Statement st(cache, 0);
//   st.bind(1, job_id);
//   if (st.step() == SQLITE_ROW) use(st.text_view(0));
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/common/result.h"

namespace zeus::store {

// An error for the connection's last failure while doing `doing` (kUnavailable when the database
// is busy, locked or cannot be opened; kInternal otherwise).
tl::unexpected<Error> sqlite_error(sqlite3* db, const std::string& doing);

// Opens (creating it when missing) the database at `path`, read-write, without SQLite's own
// mutex (the owner locks). kUnavailable "<who>: cannot open '<path>': ..." with the fix otherwise.
Result<sqlite3*> sqlite_open(const std::string& path, const std::string& who);

// Runs SQL text that returns no rows (schema, pragmas).
Result<void> sqlite_exec(sqlite3* db, const char* sql, const std::string& doing);

// A connection's prepared statements, each prepared on first use and finalized with the cache
// (which must go before its connection).
class StatementCache {
 public:
  StatementCache(sqlite3* db, std::span<const char* const> sql)
      : db_(db), sql_(sql), stmts_(sql.size()) {}
  ~StatementCache();
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;

  sqlite3* db() const { return db_; }
  // Statement `index` of the SQL list, or nullptr when it cannot be prepared (sqlite3_errmsg).
  sqlite3_stmt* get(size_t index);

 private:
  sqlite3* db_;
  std::span<const char* const> sql_;
  std::vector<sqlite3_stmt*> stmts_;
};

// A statement in use: prepared from SQL text and finalized on scope exit, or borrowed from a
// StatementCache and reset (bindings cleared) on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql);
  Statement(StatementCache& cache, size_t index) : stmt_(cache.get(index)), owned_(false) {}
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  void bind(int i, std::string_view text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, int64_t value) { sqlite3_bind_int64(stmt_, i, value); }
  void bind(int i, int value) { sqlite3_bind_int64(stmt_, i, value); }
  void bind(int i, double value) { sqlite3_bind_double(stmt_, i, value); }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(stmt_); }
  std::string text(int col) const { return std::string(text_view(col)); }
  // Valid until the next step() or the statement's end.
  std::string_view text_view(int col) const;
  int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  bool owned_ = true;
};

}  // namespace zeus::store
