// zeus: measure GPU/CPU energy and optimise training jobs from the command line.
#include <iostream>
#include <new>

#include "child_process.h"
#include "cli_util.h"
#include "commands.h"
#include "common/usage_error.h"

// zeus's status when its own output could not be written (EX_IOERR, as `zeus measure` uses).
constexpr int kOutputLostExit = 74;

int main(int argc, char** argv) {
  // A reader that goes away (`zeus ... | head -1`) must not kill zeus with SIGPIPE before it
  // reports a measured command's status: zeus ignores SIGPIPE and reports failed writes; the
  // commands it runs get the disposition zeus started with.
  zeus::cli::ChildProcess::ignore_sigpipe();
  CLI::App app{
      "Zeus: measure and optimise the energy of GPU/CPU work (NSDI '23, in C++).\n"
      "Run 'zeus <command> --help' for each command's options and examples."};
  app.set_version_flag("--version", std::string("zeus ") + ZEUS_VERSION);
  app.require_subcommand(1);
  // Subcommands, one file each (cmd_*.cc).
  zeus::cli::add_devices_command(app);
  zeus::cli::add_measure_command(app);
  zeus::cli::add_profile_command(app);
  zeus::cli::add_show_env_command(app);
  zeus::cli::add_power_command(app);
  zeus::cli::add_plo_command(app);
  zeus::cli::add_pfo_command(app);
  zeus::cli::add_simulate_command(app);
  zeus::cli::add_serve_command(app);
  zeus::cli::add_bso_command(app);
  zeus::cli::add_exporter_command(app);
  zeus::cli::add_proxy_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    // A command ended itself (its message is already printed); `zeus measure` ends with the
    // command's status, which a failed write must not replace.
    if (e.get_exit_code() == 0) return zeus::cli::report_lost_stdout() ? kOutputLostExit : 0;
    zeus::cli::report_lost_stdout();
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // A usage error exits 2, which cannot be mistaken for CLI11's 100+ codes or, under `zeus
    // measure`, for the command's own status.
    std::cerr << "zeus: "
              << zeus::cli::bound_message(zeus::cli::usage_error_message(app, e),
                                          zeus::cli::kMaxErrorBytes)
              << " (see zeus " << (argc > 1 ? std::string(argv[1]) + " " : "") << "--help)\n";
    return zeus::cli::kUsageErrorExit;
  } catch (const std::bad_alloc&) {
    // No input may end zeus with an abort and a core dump: say what happened (every GPU change
    // is put back by its owner's destructor or the exit hooks on the way out).
    std::cerr << "zeus: out of memory: the input asks for more than this machine can hold "
                 "(a trace or profile far larger than a real one?); nothing was written\n";
    return 1;
  }
  return zeus::cli::report_lost_stdout() ? kOutputLostExit : 0;
}
