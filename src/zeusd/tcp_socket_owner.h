// The owner (uid) of one TCP socket of this machine, asked of the kernel by its exact address
// pair through NETLINK_SOCK_DIAG (the interface `ss` uses): one lookup, however many sockets the
// machine has — where reading /proc/net/tcp costs a walk of the whole table per connection,
// which let 1,000 idle loopback connections delay the next client by seconds.
// Thread-safety: stateless (a netlink socket per call). Failure: kNotFound when no socket of this
// machine has that address pair (a remote peer); kUnavailable when netlink does not answer.
//
//   auto uid = zeus::zeusd::tcp_socket_owner(peer_local, peer_remote);
#pragma once

#include <netinet/in.h>

#include <cstdint>

#include "zeus/common/result.h"

namespace zeus::zeusd {

// The uid owning the IPv4 TCP socket whose local end is `local` and remote end is `remote`.
Result<uint32_t> tcp_socket_owner(const sockaddr_in& local, const sockaddr_in& remote);

}  // namespace zeus::zeusd
