// ZeusdServer's socket file at stop: removed when it is the one zeusd bound; left
// in place when someone replaced it (as a user who could move the socket's directory would).
#include "zeusd/zeusd_server.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace zeus::zeusd {
namespace {

namespace fs = std::filesystem;

class ZeusdServerSocket : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir_template[] = "/tmp/zeusd_server_XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    dir_ = dir_template;
    options_.socket_path = (dir_ / "zeusd.sock").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<ZeusdServer> start() {
    auto server = ZeusdServer::start(options_, [](const HttpRequest&, const Peer&) {
      HttpResponse response;
      response.body = "{}";
      return response;
    });
    EXPECT_TRUE(server.has_value()) << server.error().to_string();
    return server ? std::move(*server) : nullptr;
  }

  fs::path dir_;
  ServerOptions options_;
};

TEST_F(ZeusdServerSocket, StopRemovesItsOwnSocket) {
  auto server = start();
  ASSERT_NE(server, nullptr);
  EXPECT_TRUE(fs::is_socket(options_.socket_path));
  server->stop();
  EXPECT_FALSE(fs::exists(options_.socket_path));
}

TEST_F(ZeusdServerSocket, StopLeavesAReplacedSocketInPlace) {
  auto server = start();
  ASSERT_NE(server, nullptr);
  // Another socket now stands at the path; zeusd's own was moved away.
  ASSERT_EQ(std::rename(options_.socket_path.c_str(), (dir_ / "moved.sock").c_str()), 0);
  auto impostor = bind_unix_socket({options_.socket_path, {}, {}, 0666, false});
  ASSERT_TRUE(impostor.has_value()) << impostor.error().to_string();
  struct stat before {};
  ASSERT_EQ(lstat(options_.socket_path.c_str(), &before), 0);
  server->stop();
  struct stat after {};
  ASSERT_EQ(lstat(options_.socket_path.c_str(), &after), 0) << "zeusd removed another socket";
  EXPECT_EQ(after.st_ino, before.st_ino);
  close(impostor->fd);
}

}  // namespace
}  // namespace zeus::zeusd
