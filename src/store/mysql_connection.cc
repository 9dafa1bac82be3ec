// MysqlConnection (store/mysql_connection.h): the only file that includes MariaDB's mysql.h
// (built outside the unity batches, so its macros reach no other file).
#include "store/mysql_connection.h"

#include <errmsg.h>
#include <mysql.h>
#include <mysqld_error.h>

#include <mutex>
#include <utility>

namespace zeus::store {
namespace {

// mysql_library_init is not thread-safe: run once before the first connection.
void init_library() {
  static std::once_flag once;
  std::call_once(once, [] { mysql_library_init(0, nullptr, nullptr); });
}

constexpr unsigned long kTextBuffer = 256;  // a text cell's first fetch; longer ones are re-read

}  // namespace

bool MysqlError::connection_lost() const {
  switch (number) {
    case CR_CONNECTION_ERROR:
    case CR_CONN_HOST_ERROR:
    case CR_SERVER_GONE_ERROR:
    case CR_SERVER_LOST:
    case CR_SERVER_LOST_EXTENDED:
    case ER_CONNECTION_KILLED:
    case ER_SERVER_SHUTDOWN:
    case 4031:  // MySQL 8: the client was disconnected by the server because of inactivity
      return true;
    default:
      return false;
  }
}

bool MysqlError::retryable() const {
  switch (number) {
    case ER_LOCK_DEADLOCK:
    case ER_LOCK_WAIT_TIMEOUT:
    case ER_CHECKREAD:          // record changed since last read (snapshot isolation)
    case ER_TABLE_DEF_CHANGED:  // "please retry transaction"
    case ER_NEED_REPREPARE:
      return true;
    default:
      return false;
  }
}

std::string MysqlError::to_string() const {
  return message + " (error " + std::to_string(number) + ")";
}

MysqlResult<std::unique_ptr<MysqlConnection>> MysqlConnection::open(const MysqlUrl& url,
                                                                    unsigned lock_wait_timeout_s) {
  init_library();
  MYSQL* handle = mysql_init(nullptr);
  if (!handle) return tl::unexpected(MysqlError{CR_OUT_OF_MEMORY, "HY000", "out of memory"});
  std::unique_ptr<MysqlConnection> c(new MysqlConnection(handle));
  const unsigned timeout = url.connect_timeout_s;
  const my_bool no_reconnect = 0;
  const std::string session =
      "SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION', "
      "innodb_lock_wait_timeout = " +
      std::to_string(lock_wait_timeout_s) + ", autocommit = 0";
  mysql_options(handle, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  mysql_options(handle, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  mysql_options(handle, MYSQL_OPT_RECONNECT, &no_reconnect);
  mysql_options(handle, MYSQL_INIT_COMMAND,
                "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
  mysql_options(handle, MYSQL_INIT_COMMAND, session.c_str());
  // A socket only when ?unix_socket= names one: a host, "localhost" included, is reached over
  // TCP at the URL's port (the connector would take "localhost" for its default socket and
  // ignore the port, reaching another server than the URL names).
  const unsigned protocol = url.unix_socket.empty() ? MYSQL_PROTOCOL_TCP : MYSQL_PROTOCOL_SOCKET;
  mysql_options(handle, MYSQL_OPT_PROTOCOL, &protocol);
  const bool tls_required =
      !url.ssl_mode.empty() && url.ssl_mode != "disabled" && url.ssl_mode != "preferred";
  if (tls_required || url.ssl_mode == "preferred") {
    const my_bool use_tls = 1;  // asks for TLS; the connector goes on in clear without it
    mysql_options(handle, MYSQL_OPT_SSL_ENFORCE, &use_tls);
  }
  if (url.ssl_mode == "verify_ca" || url.ssl_mode == "verify_identity") {
    const my_bool verify = 1;
    mysql_options(handle, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify);
  }
  if (!url.ssl_ca.empty()) mysql_options(handle, MYSQL_OPT_SSL_CA, url.ssl_ca.c_str());
  if (!url.ssl_cert.empty()) mysql_options(handle, MYSQL_OPT_SSL_CERT, url.ssl_cert.c_str());
  if (!url.ssl_key.empty()) mysql_options(handle, MYSQL_OPT_SSL_KEY, url.ssl_key.c_str());
  if (!mysql_real_connect(handle, url.host.empty() ? nullptr : url.host.c_str(),
                          url.user ? url.user->c_str() : nullptr,
                          url.password ? url.password->c_str() : nullptr, url.database.c_str(),
                          url.port, url.unix_socket.empty() ? nullptr : url.unix_socket.c_str(),
                          0)) {
    return tl::unexpected(c->connection_error());
  }
  // The connector (Connector/C 3.3) falls back to clear text when the server offers no TLS, even
  // with TLS "enforced" unless the certificate is verified: a URL that requires TLS is checked
  // here, before anything is sent.
  if (tls_required && mysql_get_ssl_cipher(handle) == nullptr) {
    return tl::unexpected(MysqlError{CR_SSL_CONNECTION_ERROR, "HY000",
                                     "TLS/SSL error: the URL requires TLS (ssl_mode=" +
                                         url.ssl_mode +
                                         ") and the server does not offer it (enable TLS on the "
                                         "server, or drop ssl_mode from the URL)"});
  }
  // The init commands set autocommit off for the session; the client library's own flag too.
  if (mysql_autocommit(handle, 0) != 0) return tl::unexpected(c->connection_error());
  return c;
}

MysqlConnection::~MysqlConnection() {
  for (auto& [statement, stmt] : statements_) mysql_stmt_close(stmt);
  mysql_close(handle_);
}

MysqlError MysqlConnection::connection_error() {
  MysqlError e{mysql_errno(handle_), mysql_sqlstate(handle_), mysql_error(handle_)};
  if (e.connection_lost()) broken_ = true;
  return e;
}

MysqlError MysqlConnection::statement_error(MYSQL_STMT* stmt) {
  MysqlError e{mysql_stmt_errno(stmt), mysql_stmt_sqlstate(stmt), mysql_stmt_error(stmt)};
  if (e.connection_lost()) broken_ = true;
  return e;
}

unsigned long MysqlConnection::thread_id() const { return mysql_thread_id(handle_); }

MysqlResult<MYSQL_STMT*> MysqlConnection::prepared(const MysqlStatement& statement) {
  if (auto it = statements_.find(&statement); it != statements_.end()) return it->second;
  MYSQL_STMT* stmt = mysql_stmt_init(handle_);
  if (!stmt) return tl::unexpected(connection_error());
  const std::string_view sql = statement.sql;
  if (mysql_stmt_prepare(stmt, sql.data(), sql.size()) != 0) {
    MysqlError e = statement_error(stmt);
    mysql_stmt_close(stmt);
    return tl::unexpected(std::move(e));
  }
  statements_.emplace(&statement, stmt);
  return stmt;
}

MysqlResult<MysqlOutcome> MysqlConnection::run(const MysqlStatement& statement,
                                               std::initializer_list<MysqlParam> params) {
  MysqlResult<MYSQL_STMT*> stmt = prepared(statement);
  if (!stmt) return tl::unexpected(stmt.error());
  if (mysql_stmt_param_count(*stmt) != params.size()) {
    return tl::unexpected(MysqlError{CR_INVALID_PARAMETER_NO, "HY000",
                                     std::string("statement '") + statement.sql + "' takes " +
                                         std::to_string(mysql_stmt_param_count(*stmt)) +
                                         " parameters, not " + std::to_string(params.size())});
  }
  std::vector<MYSQL_BIND> binds(params.size());
  std::vector<unsigned long> lengths(params.size());
  std::vector<long long> integers(params.size());
  std::vector<double> reals(params.size());
  size_t i = 0;
  for (const MysqlParam& p : params) {
    MYSQL_BIND& b = binds[i];
    b = MYSQL_BIND{};
    switch (p.kind()) {
      case MysqlParam::Kind::kText:
        b.buffer_type = MYSQL_TYPE_STRING;
        // Never a null buffer: the connector sends that as SQL NULL, not as "".
        b.buffer = const_cast<char*>(p.text().data() ? p.text().data() : "");
        b.buffer_length = lengths[i] = p.text().size();
        b.length = &lengths[i];
        break;
      case MysqlParam::Kind::kInt:
        integers[i] = p.integer();
        b.buffer_type = MYSQL_TYPE_LONGLONG;
        b.buffer = &integers[i];
        break;
      case MysqlParam::Kind::kDouble:
        reals[i] = p.real();
        b.buffer_type = MYSQL_TYPE_DOUBLE;
        b.buffer = &reals[i];
        break;
    }
    ++i;
  }
  if ((!binds.empty() && mysql_stmt_bind_param(*stmt, binds.data()) != 0) ||
      mysql_stmt_execute(*stmt) != 0) {
    return tl::unexpected(statement_error(*stmt));
  }
  MysqlOutcome out;
  if (mysql_stmt_field_count(*stmt) == 0) {
    out.affected_rows = mysql_stmt_affected_rows(*stmt);
    return out;
  }
  MysqlResult<std::vector<MysqlRow>> rows = fetch_rows(*stmt, statement.columns);
  mysql_stmt_free_result(*stmt);
  if (!rows) return tl::unexpected(rows.error());
  out.rows = std::move(*rows);
  return out;
}

MysqlResult<std::vector<MysqlRow>> MysqlConnection::fetch_rows(
    MYSQL_STMT* stmt, const std::vector<MysqlColumn>& columns) {
  const size_t n = columns.size();
  if (mysql_stmt_field_count(stmt) != n) {
    return tl::unexpected(MysqlError{CR_UNKNOWN_ERROR, "HY000",
                                     "a statement returned " +
                                         std::to_string(mysql_stmt_field_count(stmt)) +
                                         " columns, not " + std::to_string(n)});
  }
  if (mysql_stmt_store_result(stmt) != 0) return tl::unexpected(statement_error(stmt));
  std::vector<MYSQL_BIND> binds(n);
  std::vector<unsigned long> lengths(n);
  std::vector<my_bool> nulls(n), errors(n);
  std::vector<long long> integers(n);
  std::vector<double> reals(n);
  std::vector<std::vector<char>> texts(n);
  for (size_t c = 0; c < n; ++c) {
    MYSQL_BIND& b = binds[c];
    b = MYSQL_BIND{};
    b.length = &lengths[c];
    b.is_null = &nulls[c];
    b.error = &errors[c];
    switch (columns[c]) {
      case MysqlColumn::kInt:
        b.buffer_type = MYSQL_TYPE_LONGLONG;
        b.buffer = &integers[c];
        break;
      case MysqlColumn::kDouble:
        b.buffer_type = MYSQL_TYPE_DOUBLE;
        b.buffer = &reals[c];
        break;
      case MysqlColumn::kText:
        texts[c].resize(kTextBuffer);
        b.buffer_type = MYSQL_TYPE_STRING;
        b.buffer = texts[c].data();
        b.buffer_length = kTextBuffer;
        break;
    }
  }
  if (mysql_stmt_bind_result(stmt, binds.data()) != 0) return tl::unexpected(statement_error(stmt));
  std::vector<MysqlRow> rows;
  rows.reserve(mysql_stmt_num_rows(stmt));
  for (;;) {
    const int status = mysql_stmt_fetch(stmt);
    if (status == MYSQL_NO_DATA) break;
    if (status != 0 && status != MYSQL_DATA_TRUNCATED) return tl::unexpected(statement_error(stmt));
    MysqlRow row(n);
    for (size_t c = 0; c < n; ++c) {
      MysqlCell& cell = row[c];
      cell.null = nulls[c] != 0;
      if (cell.null) continue;
      switch (columns[c]) {
        case MysqlColumn::kInt:
          cell.integer = integers[c];
          break;
        case MysqlColumn::kDouble:
          cell.real = reals[c];
          break;
        case MysqlColumn::kText:
          if (lengths[c] <= kTextBuffer) {
            cell.text.assign(texts[c].data(), lengths[c]);
          } else {  // longer than the buffer: read the whole value
            cell.text.resize(lengths[c]);
            MYSQL_BIND whole{};
            unsigned long whole_length = 0;
            whole.buffer_type = MYSQL_TYPE_STRING;
            whole.buffer = cell.text.data();
            whole.buffer_length = lengths[c];
            whole.length = &whole_length;
            if (mysql_stmt_fetch_column(stmt, &whole, static_cast<unsigned>(c), 0) != 0) {
              return tl::unexpected(statement_error(stmt));
            }
          }
          break;
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

MysqlResult<void> MysqlConnection::execute(std::string_view sql) {
  if (mysql_real_query(handle_, sql.data(), sql.size()) != 0) {
    return tl::unexpected(connection_error());
  }
  do {  // consume every result (a multi-result statement leaves the connection busy otherwise)
    if (MYSQL_RES* result = mysql_store_result(handle_))
      mysql_free_result(result);
    else if (mysql_field_count(handle_) != 0)
      return tl::unexpected(connection_error());
  } while (mysql_next_result(handle_) == 0);
  if (mysql_errno(handle_) != 0) return tl::unexpected(connection_error());
  return {};
}

MysqlResult<void> MysqlConnection::commit() {
  if (mysql_commit(handle_) != 0) return tl::unexpected(connection_error());
  return {};
}

MysqlResult<void> MysqlConnection::rollback() {
  if (mysql_rollback(handle_) != 0) return tl::unexpected(connection_error());
  return {};
}

MysqlResult<void> MysqlConnection::ping() {
  if (mysql_ping(handle_) != 0) return tl::unexpected(connection_error());
  return {};
}

}  // namespace zeus::store
