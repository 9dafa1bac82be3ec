// `zeusd serve`: wiring only — the parts live in src/zeusd/.
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "serve_config.h"
#include "zeus/common/log.h"
#include "zeus/device/device.h"
#include "zeusd/allow_list.h"
#include "zeusd/command_overrides.h"
#include "zeusd/jwt_token.h"
#include "zeusd/lease_journal.h"
#include "zeusd/override_gpu.h"
#include "zeusd/process_identity.h"
#include "zeusd/process_watcher.h"
#include "zeusd/request_gate.h"
#include "zeusd/unix_socket_setup.h"
#include "zeusd/zeusd_server.h"
#include "zeusd/zeusd_service.h"

namespace zeus::zeusd_cli {
namespace {

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
  if (!entry) die("--socket-uid '" + name + "' is not a user of this machine");
  return entry->pw_uid;
}

uint32_t resolve_group(const std::string& name) {
  if (auto id = numeric(name)) return *id;
  const group* entry = getgrnam(name.c_str());
  if (!entry) die("--socket-gid '" + name + "' is not a group of this machine");
  return entry->gr_gid;
}

// A hint for an NVML library zeusd cannot open under /home or /root: the file may be there, hidden
// by the systemd unit's sandbox (zeusd.service has ProtectHome=yes), so "not found" is
// misleading. "" when the path is elsewhere, or is there to see.
std::string hidden_home_hint(const std::string& path) {
  const bool home = path.rfind("/home/", 0) == 0 || path.rfind("/root/", 0) == 0;
  if (!home || ::access(path.c_str(), F_OK) == 0) return "";
  return "; " + path.substr(0, path.find('/', 1)) +
         " may be hidden from zeusd by a systemd sandbox (ProtectHome=yes, as in zeusd.service): "
         "put the library elsewhere, e.g. /opt";
}

// The lease journal: by default beside the socket, whose directory is root's. Its directory, and
// every one above it, must be as safe as the socket's: zeusd acts as root on what it says.
std::unique_ptr<zeusd::LeaseJournal> open_lease_journal(const ServeConfig& config,
                                                        const std::string& socket_path) {
  if (config.lease_journal == "none") {
    log_warning(
        "zeusd: --lease-journal none: leases live in memory only, so a zeusd crash leaves the "
        "GPUs its clients changed as they are");
    return nullptr;
  }
  std::string path = config.lease_journal;
  if (path.empty() && socket_path.empty()) return nullptr;  // TCP only: no process leases
  if (path.empty()) path = zeusd::directory_of(socket_path) + "/zeusd-leases.json";
  auto safe = zeusd::ensure_root_only_directory(
      zeusd::directory_of(path), "the lease journal's directory",
      "anyone who can write it can plant leases that zeusd restores as root",
      config.allow_unsafe_socket_dir);
  if (!safe) die(safe.error().message + " (--lease-journal " + path + ")");
  auto journal = std::make_unique<zeusd::LeaseJournal>(path, zeusd::current_boot_id());
  if (auto locked = journal->lock(); !locked) die(locked.error().message);
  log_info("zeusd: lease journal " + path);
  return journal;
}

// The API groups and the signing key (read once, at start).
zeusd::AccessPolicy access_policy(const ServeConfig& config) {
  zeusd::AccessPolicy access;
  if (!config.enable.empty()) {
    auto enabled = zeusd::parse_enabled_groups(config.enable);
    if (!enabled) die(enabled.error().message);
    access.enabled = *enabled;
  }
  if (!config.signing_key_path.empty()) {
    auto key = zeusd::read_signing_key(config.signing_key_path);
    if (!key) die(key.error().message + " (--signing-key-path)");
    struct stat info {};
    if (stat(config.signing_key_path.c_str(), &info) == 0 && (info.st_mode & 077) != 0) {
      log_warning("zeusd: the signing key " + config.signing_key_path +
                  " is readable by others than its owner: whoever reads it can issue tokens "
                  "(fix: chmod 600 " + config.signing_key_path + ")");
    }
    access.signing_key = std::move(*key);
    log_info("zeusd: bearer tokens required (key from " + config.signing_key_path +
             "); /discover and /time stay open");
  }
  std::string groups;
  for (const auto& name : access.enabled_names()) groups += (groups.empty() ? "" : ", ") + name;
  log_info("zeusd: API groups served: " + groups);
  return access;
}

}  // namespace

int run_serve(const ServeConfig& config) {
  if (!config.log_level.empty()) {
    LogLevel level;
    if (!parse_log_level(config.log_level, &level))
      die("--log-level must be debug, info, warning or error");
    set_log_level(level);
  } else if (std::getenv("ZEUS_LOG_LEVEL") == nullptr) {
    set_log_level(LogLevel::kInfo);  // every change is logged with who asked
  }
  zeusd::ServerOptions options;
  options.socket_path = config.mode == "tcp" ? "" : config.socket_path;
  if (config.mode != "uds") options.tcp_address = config.tcp_bind_address;
  if (!config.legacy_tcp.empty()) {
    if (config.mode == "tcp") die("--tcp is the old spelling of --tcp-bind-address: give one");
    options.tcp_address = config.legacy_tcp;
  }
  if (!config.socket_owner.empty()) options.socket_owner_uid = resolve_user(config.socket_owner);
  if (!config.socket_group.empty()) options.socket_group_gid = resolve_group(config.socket_group);
  if (config.socket_mode.empty() || config.socket_mode.size() > 4 ||
      config.socket_mode.find_first_not_of("01234567") != std::string::npos) {
    die("--socket-permissions '" + config.socket_mode + "' is not an octal mode like 0660");
  }
  options.socket_mode = static_cast<uint32_t>(std::stoul(config.socket_mode, nullptr, 8));
  options.allow_unsafe_socket_dir = config.allow_unsafe_socket_dir;
  options.max_connections = config.max_connections;
  options.max_connections_per_user = config.max_connections_per_user;
  options.request_timeout_s = config.request_timeout_s;
  options.idle_timeout_s = config.idle_timeout_s;

  zeusd::AccessPolicy access = access_policy(config);
  // With tokens, callers are identified by them: any address may be served.
  options.tcp_any_address = access.auth_required();
  if (!options.tcp_address.empty() && !access.auth_required()) {
    log_warning("zeusd: TCP without --signing-key-path: read-only, loopback only, callers "
                "identified by the socket table and the allow-list");
  }

  zeusd::AllowList allow;
  for (const auto& spec : config.allow) {
    auto added = allow.add(spec);
    if (!added) die(added.error().message);
  }

  DiscoverOptions discover_options = DiscoverOptions::from_environment();
  // zeusd manages every GPU of the machine: its indices are physical ones.
  discover_options.cuda_visible_devices.reset();
  discover_options.hip_visible_devices.reset();
  discover_options.rocr_visible_devices.reset();
  if (!config.nvml_path.empty()) discover_options.nvml_path = config.nvml_path;
  if (!config.powercap_root.empty()) discover_options.powercap_root = config.powercap_root;
  auto devices = discover(discover_options);
  if (!devices) die(devices.error().message);
  if (!config.gpu_command_overrides.empty()) {
    auto overrides = zeusd::CommandOverrides::load(config.gpu_command_overrides);
    if (!overrides) die(overrides.error().message);
    std::string names;
    for (const std::string& name : overrides->operation_names()) names += " " + name;
    log_info("zeusd: GPU command overrides from " + config.gpu_command_overrides + ":" +
             (names.empty() ? std::string(" none") : names));
    zeusd::apply_command_overrides(
        devices->gpus, std::make_shared<const zeusd::CommandOverrides>(std::move(*overrides)));
  }
  if (geteuid() != 0) {
    log_warning(config.gpu_command_overrides.empty()
                    ? "zeusd: not running as root: changes and RAPL reads will fail"
                    : "zeusd: not running as root: GPU writes without a command override and "
                      "RAPL reads will fail");
  }
  for (const auto& backend : devices->backends) {
    const std::string hint = backend.backend == "nvml" && !backend.used
                                 ? hidden_home_hint(discover_options.nvml_path)
                                 : "";
    log_info("zeusd: backend " + backend.backend + ": " + (backend.used ? "" : "not used: ") +
             backend.detail + hint);
  }
  for (int c = 0; c < zeusd::kCapabilityCount; ++c) {
    const auto capability = static_cast<zeusd::Capability>(c);
    log_info("zeusd: " + std::string(zeusd::capability_name(capability)) +
             " allowed for " + allow.describe(capability));
  }
  // Upstream zeusd let whoever could open the socket use it; here the allow-list decides. An
  // operator who opened the socket to others (upstream's --socket-permissions 666) but allowed
  // nobody would see every request refused: said at start, with the flag.
  const bool open_to_others = (options.socket_mode & 0006) != 0 ||
                              ((options.socket_mode & 0060) != 0 && options.socket_group_gid.has_value());
  if (!options.socket_path.empty() && open_to_others &&
      allow.root_only(zeusd::Capability::kGpuControl)) {
    log_warning("zeusd: the socket is open to other users (--socket-permissions " +
                config.socket_mode +
                (config.socket_group.empty() ? "" : ", --socket-gid " + config.socket_group) +
                ") but no --allow names any: only root may change GPUs (403 for everyone else). "
                "Name who may, e.g. `zeusd serve --allow gpu-control=alice,@gpu-users "
                "--allow gpu-read=*` (upstream's behaviour: --allow gpu-control=* "
                "--allow gpu-read=* --allow cpu-read=*)");
  }
  const auto upstream_changes = zeusd::parse_upstream_changes(config.upstream_changes);
  if (!upstream_changes) {
    die("--upstream-changes '" + config.upstream_changes + "' is not lease, persist or on-request");
  }
  log_info(std::string("zeusd: changes through upstream's routes on the socket ") +
           (*upstream_changes == zeusd::UpstreamOptions::Changes::kLease
                ? "are tied to the calling process and undone when it exits "
                  "(--upstream-changes lease; 'persist' keeps them until reset, as upstream)"
            : *upstream_changes == zeusd::UpstreamOptions::Changes::kPersist
                ? "persist until reset, as upstream zeusd's (--upstream-changes persist)"
                : "are tied to the calling process unless the request says "
                  "'X-Zeusd-Persist: 1' (--upstream-changes on-request)"));

  // Signals are taken synchronously by sigwait below; block them before any thread starts.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  const std::unique_ptr<zeusd::LeaseJournal> journal =
      open_lease_journal(config, options.socket_path);
  zeusd::PidfdWatcher watcher;
  zeusd::UpstreamOptions upstream;
  upstream.cpu_power_window_s = 1.0 / config.cpu_power_poll_hz;
  upstream.gpu_power_poll_hz = config.gpu_power_poll_hz;  // the power streams' pollers
  upstream.cpu_power_poll_hz = config.cpu_power_poll_hz;
  upstream.changes = *upstream_changes;
  zeusd::ZeusdService service(*devices, std::move(allow), watcher, journal.get(), upstream,
                              std::move(access), config.lease_session_timeout_s);
  auto started = watcher.start([&service](int pid) { service.on_process_exit(pid); });
  if (!started) die(started.error().message);
  // What a crashed or killed zeusd left: restored or re-adopted before any client is served.
  service.recover();
  auto server = zeusd::ZeusdServer::start(
      options,
      [&service](const zeusd::HttpRequest& request, const zeusd::Peer& peer) {
        return service.handle(request, peer);
      },
      [&service](const zeusd::HttpRequest& request, const zeusd::Peer& peer,
                 const std::shared_ptr<http::Reply>& reply) {
        return service.stream(request, peer, reply);
      });
  if (!server) die(server.error().message);
  std::cerr << "zeusd: serving " << devices->gpus.size() << " GPU(s) and "
            << devices->cpus.size() << " CPU package(s)";
  if (!options.socket_path.empty()) std::cerr << " on " << options.socket_path;
  if (!options.tcp_address.empty()) {
    std::cerr << (options.socket_path.empty() ? " on " : " and on ")
              << options.tcp_address.substr(0, options.tcp_address.rfind(':')) << ":"
              << (*server)->tcp_port();
  }
  std::cerr << std::endl;

  // Wait for a stop signal, ending silent lease sessions four times a second meanwhile.
  int signal_number = -1;
  const timespec tick{0, 250'000'000};
  while ((signal_number = sigtimedwait(&stop_signals, nullptr, &tick)) < 0) {
    service.expire_sessions(zeusd::ZeusdService::monotonic_ms());
  }
  log_info("zeusd: stopping on signal " + std::to_string(signal_number) +
           "; restoring every lease");
  (*server)->stop();
  // The watcher's thread calls into the service, which is destroyed before it (declared after
  // it): stopped first, or a client exiting during the shutdown would be handled by a destroyed
  // service (seen: a hang on its GPU locks in e2e.zeusd_rejects_unknown_body_fields).
  // restore_all() then restores every lease, those of processes that exited meanwhile included.
  watcher.stop();
  service.restore_all();
  return 0;
}

}  // namespace zeus::zeusd_cli
