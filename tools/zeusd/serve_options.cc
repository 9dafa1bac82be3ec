// The options of `zeusd serve` (serve_config.h), with help text that says what each one is for.
#include "serve_config.h"

namespace zeus::zeusd_cli {

void add_serve_options(CLI::App& app, ServeConfig& c) {
  app.add_option("--mode", c.mode,
                 "uds: serve the Unix socket (default); tcp: serve TCP only, at "
                 "--tcp-bind-address; both")
      ->check(CLI::IsMember({"uds", "tcp", "both"}))
      ->capture_default_str()
      ->group("Transport");
  app.add_option("--socket-path,--socket", c.socket_path,
                 "Unix socket path (its directory, and every one above, must be root's only)")
      ->capture_default_str()
      ->group("Transport");
  app.add_option("--socket-permissions,--socket-mode", c.socket_mode,
                 "Mode of the socket file, octal: who may connect (upstream's default is 666; "
                 "ours is 0660, the socket's group)")
      ->capture_default_str()
      ->group("Transport");
  app.add_option("--socket-uid,--socket-owner", c.socket_owner,
                 "Owner of the socket file (uid or user name; default zeusd's)")
      ->group("Transport");
  app.add_option("--socket-gid,--socket-group", c.socket_group,
                 "Group of the socket file (gid or group name), e.g. the group of zeusd's users")
      ->group("Transport");
  app.add_option("--tcp-bind-address", c.tcp_bind_address,
                 "Address for --mode tcp|both, IPv4:PORT (PORT 0: any free one). Without "
                 "--signing-key-path only 127.x is served, and read-only")
      ->capture_default_str()
      ->group("Transport");
  app.add_option("--tcp", c.legacy_tcp,
                 "Deprecated: the Unix socket and TCP at ADDR (= --mode both --tcp-bind-address "
                 "ADDR)")
      ->group("Transport");
  app.add_flag("--allow-unsafe-socket-dir", c.allow_unsafe_socket_dir,
               "Start even when a directory on the way to the socket or the lease journal is "
               "not root's only (a warning instead; for private test directories)")
      ->group("Transport");

  app.add_option("--enable", c.enable,
                 "API groups to serve, comma-separated: gpu-control, gpu-read, cpu-read (default "
                 "all). A disabled group's routes answer 404 before any authentication")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group("Access");
  app.add_option("--signing-key-path", c.signing_key_path,
                 "File whose raw bytes are the HS256 key of bearer tokens (zeusd token issue). "
                 "With it every route but /discover and /time needs 'Authorization: Bearer "
                 "<token>', on the socket and over TCP")
      ->group("Access");
  app.add_option("--allow", c.allow,
                 "Grant a capability on the Unix socket: gpu-control|gpu-read|cpu-read="
                 "user,@group,uid,@gid,* (repeatable; root is always allowed)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group("Access");

  app.add_option("--gpu-power-poll-hz", c.gpu_power_poll_hz,
                 "GPU power sampling rate of the power streaming routes")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str()
      ->group("Devices");
  app.add_option("--cpu-power-poll-hz", c.cpu_power_poll_hz,
                 "CPU (RAPL) power sampling rate; /cpu/get_power measures over 1/hz seconds")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str()
      ->group("Devices");
  app.add_option("--gpu-command-overrides", c.gpu_command_overrides,
                 "TOML file of commands run instead of the driver for GPU writes (power limit, "
                 "persistence, clocks), for sites where zeusd cannot be root; refused when others "
                 "could have written it (docs/operators.md, \"GPU command overrides\")")
      ->group("Devices");
  app.add_option("--nvml-path", c.nvml_path,
                 "libnvidia-ml.so.1 to load (default: ZEUS_NVML_PATH or the driver's)")
      ->group("Devices");
  app.add_option("--powercap-root", c.powercap_root,
                 "RAPL sysfs tree (default: ZEUS_POWERCAP_ROOT or /sys/class/powercap)")
      ->group("Devices");

  app.add_option("--lease-journal", c.lease_journal,
                 "File recording every lease, so that a restarted zeusd restores (or re-adopts) "
                 "what a crashed one left (default: zeusd-leases.json beside the socket; 'none': "
                 "in memory only). Its directory must be root's only")
      ->group("Leases");
  app.add_option("--max-connections", c.max_connections,
                 "Open connections at most; at the limit an idle (or slow) connection makes room, "
                 "and root and the socket's owner have 64 more")
      ->check(CLI::Range(size_t{1}, size_t{1000000}))
      ->capture_default_str()
      ->group("Connections");
  app.add_option("--max-connections-per-user", c.max_connections_per_user,
                 "Open connections of one user (or remote address) at most")
      ->check(CLI::Range(size_t{0}, size_t{1000000}))
      ->capture_default_str()
      ->group("Connections");
  app.add_option("--request-timeout", c.request_timeout_s,
                 "Seconds a request may take to arrive once started (408 after)")
      ->check(CLI::Range(0.001, 3600.0))
      ->capture_default_str()
      ->group("Connections");
  app.add_option("--lease-session-timeout", c.lease_session_timeout_s,
                 "Seconds of silence after which a TCP client's lease session ends and zeusd "
                 "restores its changes (POST /lease_session; heartbeats keep it open)")
      ->check(CLI::Range(0.5, 86400.0));
  app.add_option("--upstream-changes", c.upstream_changes,
                 "What a change (/gpu/set_power_limit, ...) on the socket does: 'lease' ties it "
                 "to the calling process and undoes it when the process exits; 'persist' keeps "
                 "it until it is reset, as upstream zeusd does (a prolog's one-shot curl, reset "
                 "by the epilog); 'on-request' leases unless the request carries "
                 "'X-Zeusd-Persist: 1'. Over TCP a lease session decides instead")
      ->check(CLI::IsMember({"lease", "persist", "on-request"}))
      ->capture_default_str();
  app.add_option("--idle-timeout", c.idle_timeout_s,
                 "Seconds a kept-alive connection may stay idle before zeusd closes it")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str()
      ->group("Connections");
  app.add_option("--log-level", c.log_level,
                 "debug|info|warning|error (default info: every change is logged)");
  app.footer(
      "Examples:\n"
      "  zeusd serve --socket-path /run/zeusd/zeusd.sock --socket-gid zeus \\\n"
      "      --allow gpu-control=@zeus --allow gpu-read='*' --allow cpu-read=@zeus\n"
      "  zeusd serve --mode tcp --tcp-bind-address 0.0.0.0:4938 \\\n"
      "      --signing-key-path /etc/zeusd/signing.key --enable gpu-read,cpu-read\n"
      "  zeusd serve --config /etc/zeusd.toml\n"
      "Clients: ZEUSD_SOCK_PATH=<socket>, or ZEUSD_HOST_PORT=<host:port> with "
      "ZEUSD_TOKEN=<token>.");
}

}  // namespace zeus::zeusd_cli
