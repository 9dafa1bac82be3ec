// zeusd: the privileged Zeus daemon. Runs as root and lets allowed users change GPU power limits,
// persistence mode and clocks and read RAPL counters, over a Unix socket or TCP, undoing each
// change made over the socket when the process that made it exits. Commands, as upstream zeusd
// has them: `zeusd serve [options]` and `zeusd token issue [options]`; options without a command
// are the old invocation (= serve, with a deprecation note). Wiring only: the parts live in
// src/zeusd/.
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/usage_error.h"
#include "serve_config.h"
#include "zeusd/config_file.h"

int main(int argc, char** argv) {
  namespace cli = zeus::zeusd_cli;
  CLI::App app{
      "zeusd: the privileged Zeus daemon. Lets allowed users change GPU power limits and clocks\n"
      "and read GPU and RAPL energy, over a Unix socket (changes undone when their process\n"
      "exits) or TCP with bearer tokens.\n"
      "  zeusd serve ...         run the daemon (zeusd serve --help)\n"
      "  zeusd token issue ...   print a bearer token for a user (zeusd token issue --help)",
      "zeusd"};
  app.set_version_flag("--version", std::string("zeusd ") + ZEUS_VERSION);
  app.require_subcommand(1);
  // An option given in the config file and on the command line: the command line wins.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cli::ServeConfig serve_config;
  CLI::App* serve = app.add_subcommand("serve", "Run the daemon");
  serve->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::string config_path;
  serve->add_option("--config", config_path,
                    "Read options from a TOML file, one key per option (socket-path = \"...\", "
                    "allow = [\"gpu-control=alice\"], ...); unknown keys, sections and syntax "
                    "errors are refused with their line. The command line's options win.");
  cli::add_serve_options(*serve, serve_config);
  CLI::App* token = app.add_subcommand("token", "Bearer tokens");
  token->require_subcommand(1);
  cli::TokenIssueConfig issue_config;
  CLI::App* issue = token->add_subcommand("issue", "Print a signed token for a user");
  cli::add_token_issue_options(*issue, issue_config);

  std::vector<std::string> arguments(argv + 1, argv + argc);
  const bool known_command =
      !arguments.empty() && (arguments[0] == "serve" || arguments[0] == "token" ||
                             arguments[0] == "--help" || arguments[0] == "-h" ||
                             arguments[0] == "--version");
  // The old invocation: `zeusd --socket ... --allow ...` is `zeusd serve ...` (noted once the
  // command line parsed, so that a usage error stays one line).
  if (!known_command) arguments.insert(arguments.begin(), "serve");
  if (arguments[0] == "serve") {
    // The config file's settings become arguments placed before the command line's (toml++ reads
    // it strictly; CLI11's own config reader would skip unknown keys).
    std::vector<std::string> expanded{"serve"};
    std::vector<std::string> from_command_line;
    for (size_t i = 1; i < arguments.size(); ++i) {
      const std::string& arg = arguments[i];
      std::string path;
      if (arg == "--config" && i + 1 < arguments.size()) {
        path = arguments[++i];
      } else if (arg.rfind("--config=", 0) == 0) {
        path = arg.substr(9);
      } else {
        from_command_line.push_back(arg);
        continue;
      }
      auto from_file = zeus::zeusd::config_file_arguments(path);
      if (!from_file) {
        std::cerr << "zeusd: " << from_file.error().message << "\n";
        return 2;
      }
      expanded.insert(expanded.end(), from_file->begin(), from_file->end());
    }
    expanded.insert(expanded.end(), from_command_line.begin(), from_command_line.end());
    arguments = std::move(expanded);
  }
  // As an argv (CLI11 then reports unexpected arguments in their order).
  std::string program = argv[0];
  std::vector<char*> pointers{program.data()};
  for (std::string& argument : arguments) pointers.push_back(argument.data());
  try {
    app.parse(static_cast<int>(pointers.size()), pointers.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "zeusd: " << zeus::cli::usage_error_message(app, e, arguments) << " (see zeusd "
              << (serve->parsed() && known_command ? "serve "
                  : issue->parsed()                ? "token issue "
                                                   : "")
              << "--help)\n";
    return zeus::cli::kUsageErrorExit;
  }
  if (!known_command) {
    std::cerr << "zeusd: note: options without a command are deprecated; run `zeusd serve "
                 "[options]` (the same options)\n";
  }
  if (issue->parsed()) return cli::run_token_issue(issue_config);
  return cli::run_serve(serve_config);
}
