// StatementCache, Statement and the SQLite error helpers (store/sqlite_statement.h).
#include "store/sqlite/sqlite_statement.h"

namespace zeus::store {

tl::unexpected<Error> sqlite_error(sqlite3* db, const std::string& doing) {
  const int code = sqlite3_errcode(db);
  const ErrorCode ours = (code == SQLITE_BUSY || code == SQLITE_LOCKED || code == SQLITE_CANTOPEN)
                             ? ErrorCode::kUnavailable
                             : ErrorCode::kInternal;
  return fail(ours, "sqlite store: " + doing + ": " + sqlite3_errmsg(db));
}

Result<sqlite3*> sqlite_open(const std::string& path, const std::string& who) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close_v2(db);
    return fail(ErrorCode::kUnavailable, who + ": cannot open '" + path + "': " + message +
                                             "; check that the folder exists and is writable");
  }
  return db;
}

Result<void> sqlite_exec(sqlite3* db, const char* sql, const std::string& doing) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return sqlite_error(db, doing);
  return ok();
}

StatementCache::~StatementCache() {
  for (sqlite3_stmt* st : stmts_) sqlite3_finalize(st);
}

sqlite3_stmt* StatementCache::get(size_t index) {
  sqlite3_stmt*& st = stmts_.at(index);
  if (st == nullptr) {
    sqlite3_prepare_v3(db_, sql_[index], -1, SQLITE_PREPARE_PERSISTENT, &st, nullptr);
  }
  return st;
}

Statement::Statement(sqlite3* db, const char* sql) {
  if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) stmt_ = nullptr;
}

Statement::~Statement() {
  if (owned_) {
    sqlite3_finalize(stmt_);
  } else if (stmt_ != nullptr) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
}

std::string_view Statement::text_view(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) return {};
  return {reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
}

}  // namespace zeus::store
