// The settings `zeus serve` takes from upstream Zeus's BSO server when its own flags are absent:
// ZEUS_BSO_DATABASE_URL, ZEUS_BSO_SERVER_PORT, ZEUS_BSO_LOG_LEVEL and ZEUS_BSO_ECHO_SQL, from the
// environment or a `.env` file (the environment wins, as in upstream's pydantic settings), each
// with where it came from, so the server can say so at start. Upstream's database URLs are
// SQLAlchemy's: `sqlite+aiosqlite:///relative.db` (four slashes: absolute),
// `postgresql+asyncpg://...`, `mysql+asyncmy://...`; they are translated to the store factory's
// form (zeus/store/store_factory.h). Every URL shown has its password replaced by "***"
// (redact_url).
// Pure: the caller reads the environment and the file. Failure: kInvalidArgument naming the
// setting, its origin and what is accepted.
//
//   BsoSettingsInput in;  in.environment = {{"ZEUS_BSO_SERVER_PORT", "8000"}};
//   Result<BsoSettings> s = resolve_bso_settings(in);   // s->port->value == "8000"
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/common/log.h"
#include "zeus/common/result.h"

namespace zeus::server {

struct BsoSettingsInput {
  bool db_flag = false;    // --db given: it wins over the settings
  bool port_flag = false;  // --port given
  bool log_level_env = false;  // ZEUS_LOG_LEVEL set: it wins over ZEUS_BSO_LOG_LEVEL
  std::map<std::string, std::string> environment;  // the process's ZEUS_BSO_* variables
  std::map<std::string, std::string> dotenv;       // a .env file's variables (parse_dotenv)
  std::string dotenv_path;                         // shown as the origin of those
};

// One setting's value and where it came from ("ZEUS_BSO_SERVER_PORT", ".env (/srv/.env)").
struct BsoSetting {
  std::string value;  // as our flag takes it (a translated URL, a port, a log level)
  std::string origin;
  std::string shown;  // for the start line: redacted, with the original when translated
};

struct BsoSettings {
  std::optional<BsoSetting> database_url;  // a store URL for --db
  std::optional<int> port;
  std::optional<BsoSetting> port_origin;
  std::optional<LogLevel> log_level;
  std::optional<BsoSetting> log_level_origin;
  std::vector<std::string> notes;  // what was read but not used, and why (logged as warnings)
};

Result<BsoSettings> resolve_bso_settings(const BsoSettingsInput& input);

// `KEY=VALUE` lines as python-dotenv reads them: blank lines and `#` comments skipped, an
// optional `export ` prefix, values in single or double quotes (double quotes take \" \\ \n),
// or bare (a ` #` ends them). InvalidArgument naming the line for anything else.
Result<std::map<std::string, std::string>> parse_dotenv(std::string_view text);

// An SQLAlchemy URL (upstream's ZEUS_BSO_DATABASE_URL) as the store factory's: sqlite[+driver]
// (`///relative`, `////absolute`), postgresql/postgres[+driver], mysql/mariadb[+driver].
Result<std::string> store_url_from_sqlalchemy(const std::string& url);

}  // namespace zeus::server
