// MysqlUrl: a MySQL/MariaDB database URL taken apart for the C connector (store-internal; the
// forms are those of open_mysql_store, zeus/store/mysql_store.h).
//
// "mysql://user:password@host:port/database?unix_socket=/path&charset=utf8mb4&connect_timeout=5"
// (and the TLS parameters below); a host (even "localhost") is always reached over TCP at its
// port, as SQLAlchemy's drivers do — only ?unix_socket= uses a socket,
// also "mariadb://" and "mysql+<driver>://" (SQLAlchemy's, e.g. mysql+asyncmy). As SQLAlchemy
// reads it, the password runs from the user name's ':' to the URL's last '@' (so it may hold '/',
// '?', '#' and '@' unencoded); user, password and
// database are percent-decoded; a host in brackets is an IPv6 address. Nothing else is accepted:
// a URL without a database, a bad port, an unknown parameter is kInvalidArgument naming the
// problem with the URL redacted (redact_url). Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include "zeus/common/result.h"

namespace zeus::store {

struct MysqlUrl {
  std::string host;  // "" with unix_socket: the socket only
  unsigned port = 3306;
  std::optional<std::string> user;      // none: the client library's default (the login name)
  std::optional<std::string> password;  // none: no password sent
  std::string database;
  std::string unix_socket;  // "" unless ?unix_socket= was given
  unsigned connect_timeout_s = 10;
  // TLS: ?ssl_mode=disabled|preferred|required|verify_ca|verify_identity (any case; also
  // SQLAlchemy's ?ssl=true for required), ?ssl_ca=, ?ssl_cert=, ?ssl_key= (absolute paths; a CA
  // alone means verify_ca). "" : the connector's default (no TLS required).
  std::string ssl_mode;
  std::string ssl_ca, ssl_cert, ssl_key;
  std::string shown;  // the URL as messages show it (password "***")
};

// Whether url has one of the schemes above (mysql, mariadb, with or without +driver).
bool is_mysql_url(const std::string& url);

Result<MysqlUrl> parse_mysql_url(const std::string& url);

}  // namespace zeus::store
