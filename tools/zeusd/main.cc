// zeusd: the privileged Zeus daemon. Runs as root and lets allowed users change GPU power limits,
// persistence mode and clocks and read RAPL counters over a Unix socket, undoing each change
// when the process that made it exits. Wiring only: the parts live in src/zeusd/.
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/usage_error.h"
#include "zeus/device.h"
#include "zeus/log.h"
#include "zeusd/allow_list.h"
#include "zeusd/config_file.h"
#include "zeusd/lease_journal.h"
#include "zeusd/process_identity.h"
#include "zeusd/process_watcher.h"
#include "zeusd/unix_socket_setup.h"
#include "zeusd/zeusd_server.h"
#include "zeusd/zeusd_service.h"

namespace {

struct Args {
  std::string socket_path = "/run/zeusd/zeusd.sock";
  std::string socket_owner;
  std::string socket_group;
  std::string socket_mode = "0660";
  bool allow_unsafe_socket_dir = false;
  std::string tcp;
  std::vector<std::string> allow;
  std::string nvml_path;
  std::string powercap_root;
  std::string log_level;
  size_t max_connections = 1024;
  size_t max_connections_per_user = 256;
  double request_timeout_s = 10;
  double idle_timeout_s = 300;
  std::string lease_journal;  // empty: beside the socket; "none": in memory only
};

[[noreturn]] void die(const std::string& message) {
  std::cerr << "zeusd: " << message << "\n";
  std::exit(1);
}

std::optional<uint32_t> numeric(const std::string& text) {
  if (text.empty() || text.size() > 9 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return static_cast<uint32_t>(std::stoul(text));
}

uint32_t resolve_user(const std::string& name) {
  if (auto id = numeric(name)) return *id;
  const passwd* entry = getpwnam(name.c_str());
  if (!entry) die("--socket-owner '" + name + "' is not a user of this machine");
  return entry->pw_uid;
}

uint32_t resolve_group(const std::string& name) {
  if (auto id = numeric(name)) return *id;
  const group* entry = getgrnam(name.c_str());
  if (!entry) die("--socket-group '" + name + "' is not a group of this machine");
  return entry->gr_gid;
}

// The lease journal (probe item A7): by default beside the socket, whose directory is root's.
// Its directory, and every one above it, must be as safe as the socket's (probe item A4): zeusd
// acts as root on what the journal says.
std::unique_ptr<zeus::zeusd::LeaseJournal> open_lease_journal(const Args& args) {
  if (args.lease_journal == "none") {
    zeus::log_warning(
        "zeusd: --lease-journal none: leases live in memory only, so a zeusd crash leaves the "
        "GPUs its clients changed as they are");
    return nullptr;
  }
  std::string path = args.lease_journal;
  if (path.empty() && args.socket_path.empty()) return nullptr;  // TCP only: no changes, no leases
  if (path.empty()) path = zeus::zeusd::directory_of(args.socket_path) + "/zeusd-leases.json";
  auto safe = zeus::zeusd::ensure_root_only_directory(
      zeus::zeusd::directory_of(path), "the lease journal's directory",
      "anyone who can write it can plant leases that zeusd restores as root",
      args.allow_unsafe_socket_dir);
  if (!safe) die(safe.error().message + " (--lease-journal " + path + ")");
  auto journal = std::make_unique<zeus::zeusd::LeaseJournal>(path, zeus::zeusd::current_boot_id());
  if (auto locked = journal->lock(); !locked) die(locked.error().message);
  zeus::log_info("zeusd: lease journal " + path);
  return journal;
}

int run(const Args& args) {
  if (!args.log_level.empty()) {
    zeus::LogLevel level;
    if (!zeus::parse_log_level(args.log_level, &level))
      die("--log-level must be debug, info, warning or error");
    zeus::set_log_level(level);
  } else if (std::getenv("ZEUS_LOG_LEVEL") == nullptr) {
    zeus::set_log_level(zeus::LogLevel::kInfo);  // every change is logged with who asked
  }
  zeus::zeusd::ServerOptions options;
  options.socket_path = args.socket_path;
  if (!args.socket_owner.empty()) options.socket_owner_uid = resolve_user(args.socket_owner);
  if (!args.socket_group.empty()) options.socket_group_gid = resolve_group(args.socket_group);
  if (args.socket_mode.empty() || args.socket_mode.size() > 4 ||
      args.socket_mode.find_first_not_of("01234567") != std::string::npos) {
    die("--socket-mode '" + args.socket_mode + "' is not an octal mode like 0660");
  }
  options.socket_mode = static_cast<uint32_t>(std::stoul(args.socket_mode, nullptr, 8));
  options.allow_unsafe_socket_dir = args.allow_unsafe_socket_dir;
  options.tcp_address = args.tcp;
  options.max_connections = args.max_connections;
  options.max_connections_per_user = args.max_connections_per_user;
  options.request_timeout_s = args.request_timeout_s;
  options.idle_timeout_s = args.idle_timeout_s;

  zeus::zeusd::AllowList allow;
  for (const auto& spec : args.allow) {
    auto added = allow.add(spec);
    if (!added) die(added.error().message);
  }

  zeus::DiscoverOptions discover_options = zeus::DiscoverOptions::from_environment();
  // zeusd manages every GPU of the machine: its indices are physical ones.
  discover_options.cuda_visible_devices.reset();
  discover_options.hip_visible_devices.reset();
  if (!args.nvml_path.empty()) discover_options.nvml_path = args.nvml_path;
  if (!args.powercap_root.empty()) discover_options.powercap_root = args.powercap_root;
  auto devices = zeus::discover(discover_options);
  if (!devices) die(devices.error().message);
  if (geteuid() != 0)
    zeus::log_warning("zeusd: not running as root: changes and RAPL reads will fail");
  for (const auto& backend : devices->backends) {
    zeus::log_info("zeusd: backend " + backend.backend + ": " + (backend.used ? "" : "not used: ") +
                   backend.detail);
  }
  for (int c = 0; c < zeus::zeusd::kCapabilityCount; ++c) {
    const auto capability = static_cast<zeus::zeusd::Capability>(c);
    zeus::log_info("zeusd: " + std::string(zeus::zeusd::capability_name(capability)) +
                   " allowed for " + allow.describe(capability));
  }

  // Signals are taken synchronously by sigwait below; block them before any thread starts.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  const std::unique_ptr<zeus::zeusd::LeaseJournal> journal = open_lease_journal(args);
  zeus::zeusd::PidfdWatcher watcher;
  zeus::zeusd::ZeusdService service(*devices, std::move(allow), watcher, journal.get());
  auto started = watcher.start([&service](int pid) { service.on_process_exit(pid); });
  if (!started) die(started.error().message);
  // What a crashed or killed zeusd left: restored or re-adopted before any client is served.
  service.recover();
  auto server = zeus::zeusd::ZeusdServer::start(
      options,
      [&service](const zeus::zeusd::HttpRequest& request, const zeus::zeusd::Peer& peer) {
        return service.handle(request, peer);
      },
      [&service](const zeus::zeusd::HttpRequest& request, const zeus::zeusd::Peer& peer,
                 const std::shared_ptr<zeus::http::Reply>& reply) {
        return service.stream(request, peer, reply);
      });
  if (!server) die(server.error().message);
  std::cerr << "zeusd: serving " << devices->gpus.size() << " GPU(s) and " << devices->cpus.size()
            << " CPU package(s)";
  if (!options.socket_path.empty()) std::cerr << " on " << options.socket_path;
  if (!options.tcp_address.empty()) std::cerr << " and on 127.0.0.1:" << (*server)->tcp_port();
  std::cerr << std::endl;

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  zeus::log_info("zeusd: stopping on signal " + std::to_string(signal_number) +
                 "; restoring every lease");
  (*server)->stop();
  service.restore_all();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  CLI::App app{
      "zeusd: the privileged Zeus daemon. Lets allowed users change GPU power limits and clocks\n"
      "and read RAPL counters over a Unix socket; undoes each change when its process exits.\n"
      "Clients: set ZEUSD_SOCK_PATH=<socket> for the zeus library and CLI."};
  app.set_version_flag("--version", std::string("zeusd ") + ZEUS_VERSION);
  // An option given in the config file and on the command line: the command line wins.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::string config_path;
  app.add_option("--config", config_path,
                 "Read options from a TOML file, one key per option (socket = \"...\", allow = "
                 "[\"gpu-control=alice\"], ...); unknown keys, sections and syntax errors are refused "
                 "with their line. Options on the command line come after the file's.");
  app.add_option("--socket", args.socket_path,
                 "Unix socket path (default /run/zeusd/zeusd.sock; '' for none)");
  app.add_flag("--allow-unsafe-socket-dir", args.allow_unsafe_socket_dir,
               "Start even when a directory on the way to the socket or the lease journal (any "
               "ancestor, from /) is not root's or is writable by others (only a warning); "
               "otherwise zeusd refuses: anyone who can write one can replace or squat the socket");
  app.add_option("--socket-owner", args.socket_owner,
                 "Owner of the socket file (user name or uid)");
  app.add_option("--socket-group", args.socket_group,
                 "Group of the socket file (group name or gid)");
  app.add_option("--socket-mode", args.socket_mode,
                 "Mode of the socket file, octal (default 0660)");
  app.add_option("--tcp", args.tcp,
                 "Also serve reads on 127.0.0.1:PORT (changes need the Unix socket)");
  app.add_option("--allow", args.allow,
                 "Grant a capability: gpu-control|gpu-read|cpu-read=user,@group,uid,@gid,* "
                 "(repeatable; root is always allowed)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--nvml-path", args.nvml_path,
                 "libnvidia-ml.so.1 to load (default: ZEUS_NVML_PATH or the driver's)");
  app.add_option("--powercap-root", args.powercap_root,
                 "RAPL sysfs tree (default: ZEUS_POWERCAP_ROOT or /sys/class/powercap)");
  app.add_option("--max-connections", args.max_connections,
                 "Open connections at most; at the limit an idle (or slow) connection makes room, "
                 "and root and the socket's owner have 64 more")
      ->check(CLI::Range(size_t{1}, size_t{1000000}))
      ->capture_default_str();
  app.add_option("--max-connections-per-user", args.max_connections_per_user,
                 "Open connections of one user at most (root and the socket's owner: no limit)")
      ->check(CLI::Range(size_t{0}, size_t{1000000}))
      ->capture_default_str();
  app.add_option("--request-timeout", args.request_timeout_s,
                 "Seconds a request may take to arrive once started (408 after)")
      ->check(CLI::Range(0.001, 3600.0))
      ->capture_default_str();
  app.add_option("--idle-timeout", args.idle_timeout_s,
                 "Seconds a kept-alive connection may stay idle before zeusd closes it")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  app.add_option("--lease-journal", args.lease_journal,
                 "File recording every lease, so that a restarted zeusd restores (or re-adopts) "
                 "what a crashed one left (default: zeusd-leases.json beside the socket, none "
                 "without a socket; 'none': in memory only). Its directory must be root's only");
  app.add_option("--log-level", args.log_level,
                 "debug|info|warning|error (default info: every change is logged)");
  app.footer(
      "Examples:\n"
      "  zeusd --socket /run/zeusd/zeusd.sock --socket-group zeus --allow gpu-control=@zeus "
      "--allow gpu-read=* --allow cpu-read=@zeus\n"
      "  zeusd --config /etc/zeusd.toml");
  // The config file's settings become arguments placed before the command line's (toml++ reads
  // it strictly; CLI11's own config reader would skip unknown keys).
  std::vector<std::string> arguments;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string path;
    if (arg == "--config" && i + 1 < argc) {
      path = argv[++i];
    } else if (arg.rfind("--config=", 0) == 0) {
      path = arg.substr(9);
    } else {
      arguments.push_back(arg);
      continue;
    }
    auto from_file = zeus::zeusd::config_file_arguments(path);
    if (!from_file) {
      std::cerr << "zeusd: " << from_file.error().message << "\n";
      return 2;
    }
    arguments.insert(arguments.begin(), from_file->begin(), from_file->end());
  }
  std::reverse(arguments.begin(), arguments.end());  // CLI11 takes them last first
  try {
    app.parse(arguments);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "zeusd: " << zeus::cli::usage_error_message(app, e) << " (see zeusd --help)\n";
    return zeus::cli::kUsageErrorExit;
  }
  return run(args);
}
