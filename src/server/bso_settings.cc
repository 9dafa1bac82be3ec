#include "server/bso_settings.h"

#include <charconv>
#include <system_error>

#include "zeus/common/redact_url.h"
#include "zeus/store/postgres_store.h"

namespace zeus::server {
namespace {

constexpr std::string_view kDatabaseUrl = "ZEUS_BSO_DATABASE_URL";
constexpr std::string_view kServerPort = "ZEUS_BSO_SERVER_PORT";
constexpr std::string_view kLogLevel = "ZEUS_BSO_LOG_LEVEL";
constexpr std::string_view kEchoSql = "ZEUS_BSO_ECHO_SQL";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return "";
  const size_t end = s.find_last_not_of(" \t\r");
  return std::string(s.substr(begin, end - begin + 1));
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return s;
}

// The variable's value and origin: the environment first, then the .env file.
std::optional<BsoSetting> lookup(const BsoSettingsInput& in, std::string_view name) {
  const std::string key(name);
  if (auto it = in.environment.find(key); it != in.environment.end()) {
    return BsoSetting{it->second, key, it->second};
  }
  if (auto it = in.dotenv.find(key); it != in.dotenv.end()) {
    return BsoSetting{it->second, key + " in " + in.dotenv_path, it->second};
  }
  return std::nullopt;
}

// Upstream's log levels (its validator): anything else is INFO there, and said here.
std::optional<LogLevel> upstream_log_level(const std::string& name) {
  if (name == "NOTSET" || name == "DEBUG") return LogLevel::kDebug;
  if (name == "INFO") return LogLevel::kInfo;
  if (name == "WARN" || name == "WARNING") return LogLevel::kWarning;
  if (name == "ERROR" || name == "CRITICAL") return LogLevel::kError;
  return std::nullopt;
}

// One double-quoted value's escapes, as python-dotenv reads them.
std::string unescape_double_quoted(std::string_view body) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '\\' && i + 1 < body.size()) {
      const char next = body[++i];
      out += next == 'n' ? '\n' : next == 't' ? '\t' : next;
    } else {
      out += body[i];
    }
  }
  return out;
}

}  // namespace

Result<std::map<std::string, std::string>> parse_dotenv(std::string_view text) {
  std::map<std::string, std::string> out;
  int number = 0;
  while (!text.empty()) {
    ++number;
    const size_t eol = text.find('\n');
    std::string line = trim(text.substr(0, eol));
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (line.empty() || line[0] == '#') continue;
    if (starts_with(line, "export ")) line = trim(std::string_view(line).substr(7));
    const size_t eq = line.find('=');
    auto bad = [&](const std::string& why) {
      return fail(ErrorCode::kInvalidArgument, ".env line " + std::to_string(number) + ": " + why +
                                                   " (expected KEY=VALUE, KEY=\"VALUE\" or "
                                                   "KEY='VALUE')");
    };
    if (eq == std::string::npos) return bad("no '='");
    const std::string key = trim(std::string_view(line).substr(0, eq));
    if (key.empty() || key.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                             "0123456789_.") != std::string::npos) {
      return bad("'" + key.substr(0, 64) + "' is not a variable name");
    }
    std::string value = trim(std::string_view(line).substr(eq + 1));
    if (!value.empty() && (value[0] == '"' || value[0] == '\'')) {
      const char quote = value[0];
      size_t close = 1;
      while (close < value.size() && !(value[close] == quote && value[close - 1] != '\\')) ++close;
      if (close >= value.size()) return bad("the value's quote is not closed on its line");
      const std::string rest = trim(std::string_view(value).substr(close + 1));
      if (!rest.empty() && rest[0] != '#') return bad("text after the closing quote");
      const std::string_view body = std::string_view(value).substr(1, close - 1);
      value = quote == '"' ? unescape_double_quoted(body) : std::string(body);
    } else if (const size_t comment = value.find(" #"); comment != std::string::npos) {
      value = trim(std::string_view(value).substr(0, comment));
    }
    out[key] = value;
  }
  return out;
}

Result<std::string> store_url_from_sqlalchemy(const std::string& url) {
  const size_t colon = url.find("://");
  auto bad = [&](const std::string& why) {
    return fail(ErrorCode::kInvalidArgument,
                "database URL '" + redact_url(url) + "': " + why +
                    "; upstream's forms are sqlite[+aiosqlite]:///relative.db (////absolute), "
                    "postgresql[+asyncpg]://user:password@host:port/db and "
                    "mysql[+asyncmy]://user:password@host:port/db");
  };
  if (colon == std::string::npos) return bad("no scheme");
  const std::string scheme = url.substr(0, colon);
  const std::string dialect = scheme.substr(0, scheme.find('+'));
  const std::string rest = url.substr(colon + 3);
  if (dialect == "sqlite") {
    // SQLAlchemy: sqlite:///name.db is relative to the working directory, sqlite:////path
    // absolute; the store factory writes those sqlite://name.db and sqlite:///path.
    if (rest.empty() || rest[0] != '/') return bad("an SQLite URL has three or four slashes");
    const std::string path = rest.substr(1);
    if (path.empty() || path == ":memory:") return std::string("memory://");
    return "sqlite://" + path;  // "dummy.db" stays relative, "/abs/x.db" absolute
  }
  if (dialect == "postgresql" || dialect == "postgres") return "postgresql://" + rest;
  if (dialect == "mysql" || dialect == "mariadb") return "mysql://" + rest;
  return bad("the dialect '" + dialect + "' is not one this server stores in");
}

Result<BsoSettings> resolve_bso_settings(const BsoSettingsInput& in) {
  BsoSettings out;
  if (auto url = lookup(in, kDatabaseUrl)) {
    if (in.db_flag) {
      out.notes.push_back(std::string(kDatabaseUrl) + " (" + url->origin +
                          ") is not used: --db was given");
    } else {
      auto translated = store_url_from_sqlalchemy(url->value);
      if (!translated) {
        return fail(ErrorCode::kInvalidArgument,
                    url->origin + ": " + translated.error().message);
      }
      const std::string original = redact_url(url->value);
      const std::string ours = redact_url(*translated);
      out.database_url = BsoSetting{
          *translated, url->origin, original == ours ? ours : original + ", here " + ours};
    }
  }
  if (auto port = lookup(in, kServerPort)) {
    if (in.port_flag) {
      out.notes.push_back(std::string(kServerPort) + " (" + port->origin +
                          ") is not used: --port was given");
    } else {
      const std::string text = trim(port->value);
      int value = -1;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0 ||
          value > 65535) {
        return fail(ErrorCode::kInvalidArgument, port->origin + ": '" + text.substr(0, 32) +
                                                     "' is not a port (0-65535)");
      }
      out.port = value;
      out.port_origin = BsoSetting{text, port->origin, text};
    }
  }
  if (auto level = lookup(in, kLogLevel)) {
    if (in.log_level_env) {
      out.notes.push_back(std::string(kLogLevel) + " (" + level->origin +
                          ") is not used: ZEUS_LOG_LEVEL is set");
    } else {
      const std::string name = upper(trim(level->value));
      auto parsed = upstream_log_level(name);
      if (!parsed) {
        out.notes.push_back(std::string(kLogLevel) + " '" + name.substr(0, 32) + "' (" +
                            level->origin +
                            ") is not NOTSET, DEBUG, INFO, WARN, ERROR or CRITICAL: INFO, as "
                            "upstream's server does");
        parsed = LogLevel::kInfo;
      }
      out.log_level = parsed;
      out.log_level_origin = BsoSetting{name, level->origin, name};
    }
  }
  if (auto echo = lookup(in, kEchoSql); echo && upper(trim(echo->value)) == "TRUE") {
    out.notes.push_back(std::string(kEchoSql) + " (" + echo->origin +
                        ") asks for every SQL statement in the log: zeus serve does not echo "
                        "them (its stores run a fixed set of prepared statements); ignored");
  }
  return out;
}

}  // namespace zeus::server
