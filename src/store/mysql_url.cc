// parse_mysql_url() (store/mysql_url.h).
#include "store/mysql_url.h"

#include <cctype>
#include <charconv>
#include <string_view>

#include "zeus/common/redact_url.h"

namespace zeus::store {
namespace {

constexpr std::string_view kMysqlForm =
    "mysql://user:password@host:port/database (also mariadb:// and mysql+<driver>://; "
    "parameters unix_socket=/path, charset=utf8mb4, connect_timeout=SECONDS, "
    "ssl_mode=required|verify_ca|verify_identity, ssl_ca=/path, ssl_cert=/path, ssl_key=/path)";

// The scheme's length up to "://" when it is mysql or mariadb, with or without "+driver"; 0
// otherwise.
size_t mysql_scheme_length(std::string_view url) {
  const size_t colon = url.find("://");
  if (colon == std::string_view::npos) return 0;
  const std::string_view scheme = url.substr(0, colon);
  const std::string_view dialect = scheme.substr(0, scheme.find('+'));
  if (dialect != "mysql" && dialect != "mariadb") return 0;
  if (dialect.size() < scheme.size()) {  // "+driver": letters, digits, '_' only
    const std::string_view driver = scheme.substr(dialect.size() + 1);
    if (driver.empty()) return 0;
    for (char c : driver) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return 0;
    }
  }
  return colon;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX decoded; false for a '%' not followed by two hex digits.
bool percent_decode(std::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out->push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size()) return false;
    const int hi = hex_value(in[i + 1]), lo = hex_value(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return true;
}

}  // namespace

bool is_mysql_url(const std::string& url) { return mysql_scheme_length(url) > 0; }

Result<MysqlUrl> parse_mysql_url(const std::string& url) {
  MysqlUrl out;
  out.shown = redact_url(url);
  auto bad = [&](const std::string& why) {
    return fail(ErrorCode::kInvalidArgument, "database URL '" + out.shown + "': " + why +
                                                 "; the form is " + std::string(kMysqlForm));
  };
  const size_t scheme = mysql_scheme_length(url);
  if (scheme == 0) return bad("not a MySQL or MariaDB URL");
  std::string_view rest = std::string_view(url).substr(scheme + 3);
  // The userinfo first (url_userinfo_end): its password may hold '/', '?', '#' and '@' unencoded,
  // as SQLAlchemy's URLs and base64 passwords do.
  std::string_view userinfo;
  const size_t at = url_userinfo_end(rest);
  const bool has_userinfo = at != std::string_view::npos;
  if (has_userinfo) {
    userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
  }
  std::string_view query;
  if (const size_t q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos || slash + 1 == rest.size()) {
    return bad("it names no database (…/database)");
  }
  std::string_view authority = rest.substr(0, slash);
  if (!percent_decode(rest.substr(slash + 1), &out.database) ||
      out.database.find('/') != std::string::npos) {
    return bad("the database name '" + std::string(rest.substr(slash + 1)) + "' is not valid");
  }
  if (authority.find('@') != std::string_view::npos) {
    return bad("the host holds an '@' (write one in a user name as %40)");
  }
  if (has_userinfo) {
    const size_t colon = userinfo.find(':');
    std::string decoded;
    if (!percent_decode(userinfo.substr(0, colon), &decoded)) {
      return bad("the user name has a bad %-escape");
    }
    if (!decoded.empty()) out.user = decoded;
    if (colon != std::string_view::npos) {
      if (!percent_decode(userinfo.substr(colon + 1), &decoded)) {
        return bad("the password has a bad %-escape (write a '%' as %25)");
      }
      out.password = decoded;
    }
  }
  // host[:port], the host possibly "[v6 address]".
  std::string_view port_text;
  bool has_port = false;  // a ':' after the host, even with nothing after it
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("the IPv6 host has no closing ']'");
    out.host = std::string(authority.substr(1, close - 1));
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("text after the IPv6 host");
      port_text = after.substr(1);
      has_port = true;
    }
  } else if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    out.host = std::string(authority.substr(0, colon));
    port_text = authority.substr(colon + 1);
    has_port = true;
  } else {
    out.host = std::string(authority);
  }
  if (has_port) {
    unsigned port = 0;
    const auto [end, ec] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
        port == 0 || port > 65535) {
      return bad("the port '" + std::string(port_text) + "' is not a number in 1..65535");
    }
    out.port = port;
  }
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    const std::string_view name = pair.substr(0, eq);
    std::string value;
    if (eq == std::string_view::npos || !percent_decode(pair.substr(eq + 1), &value)) {
      return bad("parameter '" + std::string(name) + "' has no valid value");
    }
    if (name == "unix_socket") {
      if (value.empty() || value.front() != '/') {
        return bad(
            "unix_socket must be an absolute path, e.g. ?unix_socket=/run/mysqld/mysqld.sock");
      }
      out.unix_socket = value;
    } else if (name == "charset") {
      if (value != "utf8mb4" && value != "utf8") {
        return bad("charset '" + value + "' is not utf8mb4 (the store always uses utf8mb4)");
      }
    } else if (name == "connect_timeout") {
      unsigned seconds = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
      if (ec != std::errc() || end != value.data() + value.size() || seconds == 0 ||
          seconds > 3600) {
        return bad("connect_timeout '" + value + "' is not a whole number of seconds in 1..3600");
      }
      out.connect_timeout_s = seconds;
    } else if (name == "ssl_mode" || name == "ssl-mode" || name == "sslmode") {
      std::string mode;
      for (char ch : value) mode += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (mode == "disable") mode = "disabled";
      if (mode == "require") mode = "required";  // libpq's spelling
      if (mode != "disabled" && mode != "preferred" && mode != "required" && mode != "verify_ca" &&
          mode != "verify_identity") {
        return bad("ssl_mode '" + value +
                   "' is not disabled, preferred, required, verify_ca or verify_identity");
      }
      out.ssl_mode = mode;
    } else if (name == "ssl") {
      if (value == "true" || value == "1") {
        if (out.ssl_mode.empty()) out.ssl_mode = "required";
      } else if (value == "false" || value == "0") {
        out.ssl_mode = "disabled";
      } else {
        return bad("ssl '" + value + "' is not true or false");
      }
    } else if (name == "ssl_ca" || name == "ssl_cert" || name == "ssl_key") {
      if (value.empty() || value.front() != '/') {
        return bad(std::string(name) + " must be an absolute path, e.g. ?" + std::string(name) +
                   "=/etc/zeus/mysql-" + (name == "ssl_ca" ? "ca" : name == "ssl_cert" ? "cert" : "key") +
                   ".pem");
      }
      (name == "ssl_ca" ? out.ssl_ca : name == "ssl_cert" ? out.ssl_cert : out.ssl_key) = value;
    } else {
      return bad("unknown parameter '" + std::string(name) + "'");
    }
  }
  if (out.host.empty() && out.unix_socket.empty()) {
    return bad("it names no host (or ?unix_socket=/path)");
  }
  if (!out.ssl_ca.empty() && out.ssl_mode.empty()) out.ssl_mode = "verify_ca";
  if (out.ssl_cert.empty() != out.ssl_key.empty()) {
    return bad("ssl_cert and ssl_key go together (a client certificate and its key)");
  }
  return out;
}

}  // namespace zeus::store
