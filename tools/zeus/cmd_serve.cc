// zeus serve: the batch-size optimizer as an HTTP service (routes and bodies: docs/server.md)
// over SQLite, PostgreSQL or memory, with the dashboard at / and Prometheus metrics at /metrics.
// Runs until SIGINT or SIGTERM, then finishes the requests in flight and exits 0.
#include <signal.h>

#include <iostream>
#include <string>

#include "cli_util.h"
#include "commands.h"
#include "server/store_url.h"
#include "token_file.h"
#include "zeus/bso_server.h"
#include "zeus/log.h"

namespace zeus::cli {
namespace {

struct ServeArgs {
  std::string db;
  std::string token_file;
  std::string job_rules = "zeus";
  BsoServerOptions options;
};

void run_serve(const ServeArgs& args) {
  BsoServerOptions options = args.options;
  options.upstream_rules = args.job_rules == "upstream";
  if (!args.token_file.empty()) options.token = read_token_file_or_die(args.token_file);
  const std::string url = args.db.empty() ? server::default_store_url() : args.db;
  std::unique_ptr<Store> store =
      value_or_die(server::open_store_url(url, options.workers), "opening " + url);

  // Signals go to sigwait() below, not to the server's threads (which inherit this mask).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  std::unique_ptr<BsoServer> server = value_or_die(BsoServer::start(*store, options));
  std::cout << "zeus serve: listening on " << server->url() << " (store " << url
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
      "Example: zeus serve --db sqlite:///var/lib/zeus/bso.db --port 8000");
  cmd->add_option("--db", args->db,
                  "store URL: sqlite:///PATH (default: " + server::default_store_url() +
                      "; add ?synchronous=full to survive power loss, not only a crash), "
                      "postgresql://..., or memory:// (lost at exit)");
  cmd->add_option("--host", args->options.host, "address to listen on")->capture_default_str();
  cmd->add_option("--port", args->options.port, "port to listen on (0: any free port, printed)")
      ->capture_default_str();
  cmd->add_option("--token-file", args->token_file,
                  "file holding a bearer token; requests that change state must send "
                  "'Authorization: Bearer <token>'");
  cmd->add_option("--workers", args->options.workers,
                  "threads for the requests' store work (and PostgreSQL connections); open "
                  "connections hold no thread")
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
  cmd->callback([args] { run_serve(*args); });
}

}  // namespace zeus::cli
