// Who is on the other end of a zeusd connection, as the kernel reports it (never as the peer
// claims it).
//
// Unix socket: SO_PEERCRED gives pid, uid and gid at connect time; the supplementary groups come
// from /proc/<pid>/status (the process's real groups, which `newgrp`/`runuser -g` change), or the
// user's groups from the group database when that file is gone. Loopback TCP: the peer socket's
// owner uid comes from the kernel (sock_diag, tcp_socket_owner.h; /proc/net/tcp where that does
// not answer); the pid is unknown (-1).
// Thread-safety: stateless. Failure: Unavailable when the kernel does not answer, NotFound when a
// TCP peer is not a local socket (zeusd listens on 127.0.0.1 only).
//
//   auto peer = zeus::zeusd::unix_peer(connection_fd);
//   if (peer) zeus::log_info("request from " + peer->description());
#pragma once

#include "zeus/common/result.h"
#include "zeusd/allow_list.h"

namespace zeus::zeusd {

// The credentials of the process connected to the AF_UNIX socket `fd`.
Result<Peer> unix_peer(int fd);

// The owner of the loopback TCP connection `fd` (accepted by zeusd), from `proc_net_tcp`.
Result<Peer> tcp_peer(int fd, const std::string& proc_net_tcp = "/proc/net/tcp");

}  // namespace zeus::zeusd
