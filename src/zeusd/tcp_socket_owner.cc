#include "zeusd/tcp_socket_owner.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>

namespace zeus::zeusd {

Result<uint32_t> tcp_socket_owner(const sockaddr_in& local, const sockaddr_in& remote) {
  const int fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) {
    return fail(ErrorCode::kUnavailable,
                std::string("cannot open a sock_diag netlink socket: ") + std::strerror(errno));
  }
  struct Request {
    nlmsghdr header;
    inet_diag_req_v2 query;
  } request{};
  request.header.nlmsg_len = sizeof(request);
  request.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  request.header.nlmsg_flags = NLM_F_REQUEST;  // one socket, not a dump
  request.header.nlmsg_seq = 1;
  request.query.sdiag_family = AF_INET;
  request.query.sdiag_protocol = IPPROTO_TCP;
  request.query.idiag_states = ~0u;
  request.query.id.idiag_sport = local.sin_port;  // network byte order, as the kernel keeps them
  request.query.id.idiag_dport = remote.sin_port;
  request.query.id.idiag_src[0] = local.sin_addr.s_addr;
  request.query.id.idiag_dst[0] = remote.sin_addr.s_addr;
  request.query.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  request.query.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  // A reply within 1 s, or the lookup is treated as unanswered.
  timeval timeout{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  if (::sendto(fd, &request, sizeof(request), 0, reinterpret_cast<sockaddr*>(&kernel),
               sizeof(kernel)) != static_cast<ssize_t>(sizeof(request))) {
    const int error = errno;
    ::close(fd);
    return fail(ErrorCode::kUnavailable,
                std::string("sock_diag request failed: ") + std::strerror(error));
  }
  alignas(nlmsghdr) std::array<char, 8192> buffer{};
  const ssize_t got = ::recv(fd, buffer.data(), buffer.size(), 0);
  const int error = errno;
  ::close(fd);
  if (got < static_cast<ssize_t>(sizeof(nlmsghdr))) {
    return fail(ErrorCode::kUnavailable,
                std::string("sock_diag gave no answer: ") + (got < 0 ? std::strerror(error) : "short"));
  }
  const auto* answer = reinterpret_cast<const nlmsghdr*>(buffer.data());
  if (!NLMSG_OK(answer, static_cast<unsigned>(got))) {
    return fail(ErrorCode::kUnavailable, "sock_diag answered a malformed message");
  }
  if (answer->nlmsg_type == NLMSG_ERROR) {
    if (answer->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr))) {
      return fail(ErrorCode::kUnavailable, "sock_diag answered a short error");
    }
    const auto* failure = static_cast<const nlmsgerr*>(NLMSG_DATA(answer));
    if (failure->error == -ENOENT) {
      return fail(ErrorCode::kNotFound, "no TCP socket of this machine has that address pair");
    }
    return fail(ErrorCode::kUnavailable,
                std::string("sock_diag lookup failed: ") + std::strerror(-failure->error));
  }
  if (answer->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
      answer->nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg))) {
    return fail(ErrorCode::kUnavailable, "sock_diag answered an unexpected message");
  }
  return static_cast<const inet_diag_msg*>(NLMSG_DATA(answer))->idiag_uid;
}

}  // namespace zeus::zeusd
