// When the process runs out of descriptors (EMFILE at accept), the server acts as
// at its connection cap — the longest-idle connection makes room — instead of leaving every new
// peer unanswered in the backlog.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <filesystem>
#include <thread>
#include <vector>

#include "http/test_server.h"

namespace zeus::http {
namespace {

using namespace std::chrono_literals;

size_t open_descriptors() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

bool connect_to(int fd, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
}

std::string read_some(int fd, double timeout_s) {
  timeval tv{static_cast<time_t>(timeout_s), 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  char buf[4096];
  const ssize_t n = recv(fd, buf, sizeof(buf), 0);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

TEST(ServerDescriptorsTest, OutOfDescriptorsAtAcceptEvictsTheLongestIdle) {
#if defined(__SANITIZE_ADDRESS__)
  // The sanitizers' runtime needs descriptors of its own (UBSan probes memory through a pipe):
  // out of them it reports false errors. The release run covers this test.
  GTEST_SKIP() << "needs every descriptor; run in the release build";
#endif
  testing::Running r = testing::start(
      {}, HttpServer::blocking([](const HttpRequest&, const Peer&) { return HttpResponse(); }));
  // Every client socket exists before the limit drops: only the server's accepts need more.
  std::vector<int> idle(12);
  for (int& fd : idle) fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit tight = saved;
  tight.rlim_cur = open_descriptors() + 3;  // room for three accepted connections
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &tight), 0);
  for (int fd : idle) {
    EXPECT_TRUE(connect_to(fd, r.port));  // the kernel completes it; accept may not
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(connect_to(client, r.port));
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(send(client, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  const std::string answer = read_some(client, 5);
  setrlimit(RLIMIT_NOFILE, &saved);
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << "'" << answer << "'";
  EXPECT_GE(r.server->stats().evicted, 9u);
  for (int fd : idle) close(fd);
  close(client);
}

}  // namespace
}  // namespace zeus::http
