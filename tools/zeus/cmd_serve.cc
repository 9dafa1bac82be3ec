// zeus serve: the batch-size optimizer as an HTTP service (routes and bodies: docs/server.md)
// over SQLite, PostgreSQL or memory, with the dashboard at / and Prometheus metrics at /metrics.
// Runs until SIGINT or SIGTERM, then finishes the requests in flight and exits 0.
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "cli_util.h"
#include "commands.h"
#include "server/bso_settings.h"
#include "server/store_url.h"
#include "token_file.h"
#include "zeus/common/log.h"
#include "zeus/common/redact_url.h"
#include "zeus/server/bso_server.h"
#include "zeus/store/postgres_store.h"

namespace zeus::cli {
namespace {

struct ServeArgs {
  std::string db;
  std::string db_file;
  std::string token_file;
  std::string job_rules = "zeus";
  BsoServerOptions options;
  bool db_given = false;
  bool port_given = false;
};

// The nearest .env from the working directory up (upstream's settings read one as
// python-dotenv's find_dotenv does), or "" when there is none.
std::string find_dotenv() {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::current_path(ec);
  for (int depth = 0; !ec && depth < 64; ++depth) {
    const std::filesystem::path candidate = dir / ".env";
    std::error_code missing;  // a folder without a .env is not an error
    if (std::filesystem::is_regular_file(candidate, missing)) return candidate.string();
    if (!dir.has_parent_path() || dir.parent_path() == dir) break;
    dir = dir.parent_path();
  }
  return "";
}

// Upstream's ZEUS_BSO_* settings where our flags are absent; says what came from where.
void apply_upstream_settings(ServeArgs& args) {
  server::BsoSettingsInput in;
  in.db_flag = args.db_given;
  in.port_flag = args.port_given;
  in.log_level_env = std::getenv("ZEUS_LOG_LEVEL") != nullptr;
  for (const char* name : {"ZEUS_BSO_DATABASE_URL", "ZEUS_BSO_SERVER_PORT", "ZEUS_BSO_LOG_LEVEL",
                           "ZEUS_BSO_ECHO_SQL"}) {
    if (const char* value = std::getenv(name)) in.environment[name] = value;
  }
  in.dotenv_path = find_dotenv();
  if (!in.dotenv_path.empty()) {
    std::ifstream file(in.dotenv_path);
    std::stringstream text;
    text << file.rdbuf();
    in.dotenv = value_or_die(server::parse_dotenv(text.str()), "reading " + in.dotenv_path);
  }
  const server::BsoSettings settings =
      value_or_die(server::resolve_bso_settings(in), "upstream's BSO settings");
  for (const std::string& note : settings.notes) log_warning("zeus serve: " + note);
  std::string said;
  auto say = [&](const std::string& what, const server::BsoSetting& s) {
    said += (said.empty() ? "" : "; ") + what + " " + s.shown + " from " + s.origin;
  };
  if (settings.database_url) {
    args.db = settings.database_url->value;
    say("database", *settings.database_url);
  }
  if (settings.port) {
    args.options.port = *settings.port;
    say("port", *settings.port_origin);
  }
  if (settings.log_level) {
    set_log_level(*settings.log_level);
    say("log level", *settings.log_level_origin);
  }
  if (!said.empty()) std::cout << "zeus serve: upstream settings: " << said << std::endl;
}

void run_serve(ServeArgs args) {
  apply_upstream_settings(args);
  BsoServerOptions options = args.options;
  options.upstream_rules = args.job_rules == "upstream";
  if (!args.token_file.empty()) options.token = read_token_file_or_die(args.token_file);
  const std::string url = args.db.empty() ? server::default_store_url() : args.db;
  const std::string shown_url = redact_url(url);
  std::unique_ptr<Store> store =
      value_or_die(server::open_store_url(url, options.workers), "opening " + shown_url);

  // Signals go to sigwait() below, not to the server's threads (which inherit this mask).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  std::unique_ptr<BsoServer> server = value_or_die(BsoServer::start(*store, options));
  std::cout << "zeus serve: listening on " << server->url() << " (store " << shown_url
            << (options.token.empty() ? "" : ", token required for changes")
            << (options.trial_timeout_s > 0
                    ? ", trials expire after " + format_fixed(options.trial_timeout_s, 0) + " s"
                    : "")
            << (options.upstream_rules ? ", upstream job rules" : "") << ")" << std::endl;
  if (options.host != "127.0.0.1" && options.host != "::1" && options.host != "localhost" &&
      options.token.empty()) {
    log_warning("zeus serve: listening on " + options.host +
                " without --token-file: anyone who can reach it can change jobs");
  }
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::cout << "zeus serve: " << (signal_number == SIGINT ? "SIGINT" : "SIGTERM")
            << ", stopping" << std::endl;
  server->stop();
  server.reset();
  store.reset();
  std::cout << "zeus serve: stopped" << std::endl;
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Run the batch-size optimizer service (HTTP; wire protocol of Zeus's BSO server).\n"
      "Routes: POST /jobs, GET /jobs/batch_size?job_id=J, POST /report, PATCH /trials,\n"
      "DELETE /jobs?job_id=J, GET /jobs, GET /jobs/{job_id}, GET /healthz, GET /metrics,\n"
      "and the dashboard at /.\n"
      "Without --db, --port: upstream's settings ZEUS_BSO_DATABASE_URL (SQLAlchemy's URL\n"
      "forms), ZEUS_BSO_SERVER_PORT and ZEUS_BSO_LOG_LEVEL, from the environment or a .env\n"
      "file (the nearest from the working directory up); the start says which were used.\n"
      "Example: zeus serve --db sqlite:///var/lib/zeus/bso.db --port 8000");
  CLI::Option* db = cmd->add_option("--db", args->db,
                  "store URL: sqlite:///PATH (default: " + server::default_store_url() +
                      "; add ?synchronous=full to survive power loss, not only a crash), "
                      "postgresql://..., mysql://user:password@host:port/db (MySQL or MariaDB; "
                      "also mariadb:// and mysql+<driver>://, ?unix_socket=/path), or memory:// "
                      "(lost at exit). A URL with a password is visible to every local user on the "
                      "command line (ps): give it with --db-file or ZEUS_BSO_DATABASE_URL instead");
  CLI::Option* db_file =
      cmd->add_option("--db-file", args->db_file,
                      "file holding the store URL on one line (mode 0600; e.g. a systemd "
                      "credential: LoadCredential=db-url:/etc/zeus/db-url and --db-file "
                      "${CREDENTIALS_DIRECTORY}/db-url): the password stays off the command line")
          ->excludes(db);
  cmd->add_option("--host", args->options.host, "address to listen on")->capture_default_str();
  CLI::Option* port =
      cmd->add_option("--port", args->options.port, "port to listen on (0: any free port, printed)")
          ->capture_default_str();
  cmd->add_option("--token-file", args->token_file,
                  "file holding a bearer token; requests that change state must send "
                  "'Authorization: Bearer <token>'");
  cmd->add_option("--workers", args->options.workers,
                  "threads for the requests' store work (and PostgreSQL or MySQL connections); "
                  "open connections hold no thread")
      ->capture_default_str();
  cmd->add_option("--job-rules", args->job_rules,
                  "rules of jobs whose registration does not name them (Zeus 0.16 clients send "
                  "none): 'zeus' (predictive early stop, pruning that skips batch sizes measured "
                  "or predicted worse; measured to lower regret, docs/simulate.md) or 'upstream' "
                  "(the original Zeus server's decisions)")
      ->check(CLI::IsMember({"zeus", "upstream"}))
      ->capture_default_str();
  cmd->add_option("--trial-timeout", args->options.trial_timeout_s,
                  "seconds after which a still-dispatched trial is marked failed (0: never)")
      ->capture_default_str();
  cmd->add_option("--max-body-bytes", args->options.max_body_bytes,
                  "largest accepted request body (413 above)")
      ->capture_default_str();
  cmd->add_option("--max-connections", args->options.max_connections,
                  "open connections at most; at the limit the longest-idle (or slowest) "
                  "connection makes room for a new one")
      ->capture_default_str();
  cmd->add_option("--max-connections-per-client", args->options.max_connections_per_peer,
                  "open connections from one client address at most (0: no limit; more get 503)")
      ->capture_default_str();
  cmd->add_option("--header-timeout", args->options.header_timeout_s,
                  "seconds a request's headers may take to arrive (408 after; slow-client "
                  "defence)")
      ->capture_default_str();
  cmd->add_option("--idle-timeout", args->options.idle_timeout_s,
                  "seconds a kept-alive connection may stay idle before it is closed")
      ->capture_default_str();
  cmd->callback([args, db, db_file, port] {
    if (db_file->count() > 0) {
      args->db = read_secret_file_or_die(args->db_file, "the database URL file", "database URL");
    }
    args->db_given = db->count() > 0 || db_file->count() > 0;
    args->port_given = port->count() > 0;
    run_serve(*args);
  });
}

}  // namespace zeus::cli
