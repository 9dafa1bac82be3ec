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
  // The peer's socket: its local end is our remote end and vice versa.
  const std::string peer_local = hex_endpoint(remote);
  const std::string peer_remote = hex_endpoint(local);
  std::ifstream table(proc_net_tcp);
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
    if (local_address == peer_local && remote_address == peer_remote) {
      Peer peer;
      peer.uid = static_cast<uint32_t>(uid);
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
  }
  return fail(ErrorCode::kNotFound,
              "the TCP peer is not a socket of this machine (zeusd serves TCP on loopback only)");
}

}  // namespace zeus::zeusd
