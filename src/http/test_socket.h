// Test helper: a raw client socket to 127.0.0.1:port or a Unix socket, for sending bytes a
// well-behaved client never would (slow, partial, idle) and reading what comes back.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>

namespace zeus::http::testing {

class RawSocket {
 public:
  // receive_buffer > 0: a small receive window, set before connecting (a peer that reads slowly).
  static RawSocket tcp(int port, int receive_buffer = 0) {
    RawSocket s;
    s.fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (receive_buffer > 0) {
      setsockopt(s.fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof(receive_buffer));
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(s.fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) s.close();
    return s;
  }
  static RawSocket unix_socket(const std::string& path) {
    RawSocket s;
    s.fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
    if (connect(s.fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) s.close();
    return s;
  }
  RawSocket() = default;
  RawSocket(RawSocket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  RawSocket& operator=(RawSocket&& o) noexcept {
    close();
    fd_ = o.fd_;
    o.fd_ = -1;
    return *this;
  }
  ~RawSocket() { close(); }
  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  bool send(const std::string& bytes) {
    return fd_ >= 0 && ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
                           static_cast<ssize_t>(bytes.size());
  }
  // Reads until `until` appears, the peer closes, or `timeout_s` passes.
  std::string read(double timeout_s, const std::string& until = "") {
    std::string out;
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (fd_ >= 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[8192];
      const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
      if (!until.empty() && out.find(until) != std::string::npos) break;
    }
    return out;
  }
  // True once the peer has closed (reads end of stream within timeout_s).
  // True when the peer closes (end of stream or reset) within timeout_s; bytes still arriving
  // before the close are read and dropped (a drained buffer is not a close: wait on).
  bool closed_by_peer(double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(timeout_s));
    char buf[4096];
    while (true) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{fd_, POLLIN, 0};
      if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      while (true) {
        const ssize_t n = recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
        if (n == 0) return true;
        if (n < 0) {
          if (errno == EAGAIN || errno == EWOULDBLOCK) break;  // drained, not closed
          return errno != EINTR;
        }
      }
    }
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

}  // namespace zeus::http::testing
