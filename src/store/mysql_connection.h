// MysqlConnection: one connection to a MySQL/MariaDB server through MariaDB's C connector, with
// prepared statements and bound values (store-internal; mysql.h is included only by its .cc).
//
// A session as the MySQL store needs it: utf8mb4, READ COMMITTED, autocommit off (a transaction
// begins with the first statement and ends with commit() or rollback()), strict SQL mode, the
// given innodb_lock_wait_timeout, and no automatic reconnection (a lost connection is an error the
// caller sees, never a silent new session without its transaction). Statements are static
// MysqlStatement definitions, prepared on a connection the first time they run there
// (mysql_stmt_prepare) and kept until it closes; every value is a bound parameter, so no SQL is
// ever built from data. Results are read whole (mysql_stmt_store_result), text of any length.
// Errors carry the server's or client's number: connection_lost() (2006, 2013, a killed
// connection…) after which the connection is broken() and must be dropped, retryable()
// (deadlock 1213, lock wait timeout 1205…) after which the transaction should be rolled back and
// run again.
// Thread-safety: one thread at a time per connection; open() may be called from any thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

#include "store/mysql_url.h"

struct st_mysql;
struct st_mysql_stmt;

namespace zeus::store {

// What the server or the client library said when a call failed.
struct MysqlError {
  unsigned number = 0;   // ER_* (server, 1000-1999, 3000+) or CR_* (client, 2000-2999)
  std::string sqlstate;  // e.g. "40001"
  std::string message;
  // The connection is gone (the server closed it, was stopped or killed it).
  bool connection_lost() const;
  // The transaction may succeed when run again (deadlock, lock wait timeout, …).
  bool retryable() const;
  // "message (error N)".
  std::string to_string() const;
};

template <typename T>
using MysqlResult = tl::expected<T, MysqlError>;

// The type of a result column as the store reads it.
enum class MysqlColumn { kInt, kDouble, kText };

// A statement the store runs: SQL with '?' for each parameter, and its result columns (empty for
// statements that return no rows). Defined once (static storage): its address identifies it.
struct MysqlStatement {
  const char* sql;
  std::vector<MysqlColumn> columns;
};

// A value bound to a parameter: text (any bytes), a 64-bit integer or a double.
class MysqlParam {
 public:
  enum class Kind { kText, kInt, kDouble };
  MysqlParam(std::string_view text) : kind_(Kind::kText), text_(text) {}    // NOLINT: implicit
  MysqlParam(const std::string& text) : kind_(Kind::kText), text_(text) {}  // NOLINT: implicit
  MysqlParam(int64_t value) : kind_(Kind::kInt), integer_(value) {}         // NOLINT: implicit
  MysqlParam(int value) : kind_(Kind::kInt), integer_(value) {}             // NOLINT: implicit
  MysqlParam(double value) : kind_(Kind::kDouble), real_(value) {}          // NOLINT: implicit
  Kind kind() const { return kind_; }
  std::string_view text() const { return text_; }
  int64_t integer() const { return integer_; }
  double real() const { return real_; }

 private:
  Kind kind_;
  std::string_view text_;
  int64_t integer_ = 0;
  double real_ = 0;
};

// One value of a result row: null, or the value of its column's type.
struct MysqlCell {
  bool null = true;
  int64_t integer = 0;
  double real = 0;
  std::string text;
};
using MysqlRow = std::vector<MysqlCell>;

struct MysqlOutcome {
  std::vector<MysqlRow> rows;
  uint64_t affected_rows = 0;  // for INSERT, UPDATE, DELETE
};

class MysqlConnection {
 public:
  // Connects as url says and sets the session up (see above).
  static MysqlResult<std::unique_ptr<MysqlConnection>> open(const MysqlUrl& url,
                                                            unsigned lock_wait_timeout_s);
  ~MysqlConnection();
  MysqlConnection(const MysqlConnection&) = delete;
  MysqlConnection& operator=(const MysqlConnection&) = delete;

  // Runs the statement with params (as many as its '?'), preparing it first on this connection.
  MysqlResult<MysqlOutcome> run(const MysqlStatement& statement,
                                std::initializer_list<MysqlParam> params);
  // Runs constant SQL (schema set-up, no data in it) over the text protocol; results discarded.
  MysqlResult<void> execute(std::string_view sql);
  MysqlResult<void> commit();
  MysqlResult<void> rollback();
  // Whether the server answers on this connection (mysql_ping, never reconnecting).
  MysqlResult<void> ping();

  // The server's id of this connection (KILL <id> ends it; tests use that).
  unsigned long thread_id() const;
  // A call found the connection lost: drop it.
  bool broken() const { return broken_; }

 private:
  explicit MysqlConnection(st_mysql* handle) : handle_(handle) {}
  MysqlError connection_error();
  MysqlError statement_error(st_mysql_stmt* stmt);
  MysqlResult<st_mysql_stmt*> prepared(const MysqlStatement& statement);
  MysqlResult<std::vector<MysqlRow>> fetch_rows(st_mysql_stmt* stmt,
                                                const std::vector<MysqlColumn>& columns);

  st_mysql* handle_;
  std::map<const MysqlStatement*, st_mysql_stmt*> statements_;
  bool broken_ = false;
};

}  // namespace zeus::store
