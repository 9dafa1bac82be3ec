#include "zeusd/tcp_socket_owner.h"

#include <arpa/inet.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "zeusd/peer_credentials.h"
#include "zeusd/zeusd_server.h"

namespace zeus::zeusd {
namespace {

// A loopback listener and one connection to it: the client's socket is owned by the user it was
// created as (`client_uid`: root creates it with that file-system uid), and the server side asks
// the kernel who that is.
struct LoopbackPair {
  int listener = -1, client = -1, server = -1;
  sockaddr_in client_address{}, server_address{};
  uid_t client_uid = geteuid();

  LoopbackPair() {
    listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in any{};
    any.sin_family = AF_INET;
    any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(any);
    EXPECT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&any), sizeof(any)), 0);
    EXPECT_EQ(::listen(listener, 4), 0);
    EXPECT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&server_address), &length), 0);
    if (geteuid() == 0) {
      client_uid = 4321;  // not root, so that an owner read as 0 by mistake shows
      ::setfsuid(client_uid);
    }
    client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (geteuid() == 0) ::setfsuid(0);
    EXPECT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&server_address),
                        sizeof(server_address)),
              0);
    length = sizeof(client_address);
    EXPECT_EQ(::getsockname(client, reinterpret_cast<sockaddr*>(&client_address), &length), 0);
    server = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  }
  ~LoopbackPair() {
    for (int fd : {server, client, listener}) {
      if (fd >= 0) ::close(fd);
    }
  }
};

TEST(TcpSocketOwner, TheKernelNamesTheClientsUser) {
  LoopbackPair pair;
  auto owner = tcp_socket_owner(pair.client_address, pair.server_address);
  ASSERT_TRUE(owner) << owner.error().message;
  EXPECT_EQ(*owner, pair.client_uid);
  auto peer = tcp_peer(pair.server);
  ASSERT_TRUE(peer) << peer.error().message;
  EXPECT_EQ(peer->uid, pair.client_uid);
  EXPECT_EQ(peer->pid, -1);
  EXPECT_FALSE(peer->unix_socket);
}

TEST(TcpSocketOwner, NoSuchSocketIsNotFound) {
  LoopbackPair pair;
  sockaddr_in bogus = pair.client_address;
  bogus.sin_port = htons(static_cast<uint16_t>(ntohs(bogus.sin_port) ^ 0x5a5a));
  auto owner = tcp_socket_owner(bogus, pair.server_address);
  ASSERT_FALSE(owner);
  EXPECT_EQ(owner.error().code, ErrorCode::kNotFound);
}

TEST(TcpSocketOwner, AnyAddressOnlyWithTokens) {
  auto handler = [](const HttpRequest&, const Peer&) { return HttpResponse{}; };
  ServerOptions options;
  options.socket_path.clear();
  options.tcp_address = "0.0.0.0:0";
  auto refused = ZeusdServer::start(options, handler);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("--signing-key-path"), std::string::npos);
  options.tcp_any_address = true;
  auto served = ZeusdServer::start(options, handler);
  ASSERT_TRUE(served) << served.error().message;
  EXPECT_GT((*served)->tcp_port(), 0);
  (*served)->stop();
}

}  // namespace
}  // namespace zeus::zeusd
