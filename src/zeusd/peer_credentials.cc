#include "zeusd/peer_credentials.h"

#include <arpa/inet.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "zeusd/tcp_socket_owner.h"

namespace zeus::zeusd {
namespace {

// The groups of `pid` from /proc/<pid>/status ("Groups:\t4 24 27"); false when unreadable.
bool proc_groups(int pid, std::vector<uint32_t>* groups) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  if (!status) return false;
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Groups:", 0) != 0) continue;
    std::istringstream values(line.substr(7));
    unsigned long gid = 0;
    while (values >> gid) groups->push_back(static_cast<uint32_t>(gid));
    return true;
  }
  return false;
}

// The groups of `uid`'s account (primary `gid` included).
void account_groups(uint32_t uid, uint32_t gid, std::vector<uint32_t>* groups) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || !found) return;
  int count = 64;
  std::vector<gid_t> list(static_cast<size_t>(count));
  if (getgrouplist(found->pw_name, gid, list.data(), &count) < 0) {
    list.resize(static_cast<size_t>(count));
    if (getgrouplist(found->pw_name, gid, list.data(), &count) < 0) return;
  }
  for (int i = 0; i < count; ++i)
    groups->push_back(static_cast<uint32_t>(list[static_cast<size_t>(i)]));
}

// The gid of a TCP peer whose uid has no account (matches no allow-list group).
constexpr uint32_t kNoGroup = 0xFFFFFFFFu;

std::string hex_endpoint(const sockaddr_in& address) {
  char text[32];
  std::snprintf(text, sizeof(text), "%08X:%04X", address.sin_addr.s_addr, ntohs(address.sin_port));
  return text;
}

}  // namespace

Result<Peer> unix_peer(int fd) {
  ucred credentials{};
  socklen_t length = sizeof(credentials);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
    return fail(
        ErrorCode::kUnavailable,
        std::string("cannot read the peer's credentials (SO_PEERCRED): ") + std::strerror(errno));
  }
  Peer peer;
  peer.pid = credentials.pid;
  peer.uid = credentials.uid;
  peer.gid = credentials.gid;
  peer.unix_socket = true;
  if (!proc_groups(peer.pid, &peer.groups)) account_groups(peer.uid, peer.gid, &peer.groups);
  return peer;
}

namespace {

// The owner of the socket `local` -> `remote` from a /proc/net/tcp-format table (a scan of every
// line; used where sock_diag does not answer, and by tests with a table of their own).
Result<uint32_t> owner_from_table(const std::string& path, const sockaddr_in& local,
                                  const sockaddr_in& remote) {
  const std::string want_local = hex_endpoint(local);
  const std::string want_remote = hex_endpoint(remote);
  std::ifstream table(path);
  std::string line;
  std::getline(table, line);  // header
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local_address, remote_address, state, queues, timer, retransmits;
    unsigned long uid = 0;
    if (!(fields >> slot >> local_address >> remote_address >> state >> queues >> timer >>
          retransmits >> uid)) {
      continue;
    }
    if (local_address == want_local && remote_address == want_remote) {
      return static_cast<uint32_t>(uid);
    }
  }
  return fail(ErrorCode::kNotFound, "not in " + path);
}

}  // namespace

Result<Peer> tcp_peer(int fd, const std::string& proc_net_tcp) {
  sockaddr_in local{};
  sockaddr_in remote{};
  socklen_t local_length = sizeof(local);
  socklen_t remote_length = sizeof(remote);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_length) != 0 ||
      getpeername(fd, reinterpret_cast<sockaddr*>(&remote), &remote_length) != 0 ||
      local.sin_family != AF_INET || remote.sin_family != AF_INET) {
    return fail(ErrorCode::kUnavailable, "cannot read the TCP peer's address (IPv4 loopback only)");
  }
  // The peer's socket: its local end is our remote end and vice versa. The kernel is asked for
  // that one socket (sock_diag); the table is scanned only where netlink does not answer.
  Result<uint32_t> uid = fail(ErrorCode::kUnavailable, "a table was named");
  if (proc_net_tcp == "/proc/net/tcp") uid = tcp_socket_owner(remote, local);
  if (!uid && uid.error().code == ErrorCode::kUnavailable) {
    uid = owner_from_table(proc_net_tcp, remote, local);
  }
  if (!uid) {
    return fail(ErrorCode::kNotFound,
                "the TCP peer is not a socket of this machine (without a signing key zeusd serves "
                "TCP on loopback only)");
  }
  Peer peer;
  peer.uid = *uid;
  peer.gid = kNoGroup;
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(peer.uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
    peer.gid = found->pw_gid;
  }
  account_groups(peer.uid, peer.gid, &peer.groups);
  peer.unix_socket = false;
  return peer;
}

}  // namespace zeus::zeusd
