// Probe item A1: the socket's owner and mode can never be redirected to another file.
#include "zeusd/unix_socket_setup.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

namespace zeus::zeusd {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name, mode_t mode) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("zeusd_sock_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  chmod(dir.c_str(), mode);
  return dir;
}

TEST(UnixSocketSetup, RefusesADirectoryOthersCanWrite) {
  const fs::path dir = fresh_dir("shared", 0777);
  auto fd = bind_unix_socket({(dir / "z.sock").string(), {}, {}, 0660, false});
  ASSERT_FALSE(fd.has_value());
  EXPECT_EQ(fd.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(fd.error().message.find("writable by everyone"), std::string::npos);
  EXPECT_NE(fd.error().message.find("--allow-unsafe-socket-dir"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "z.sock"));
  EXPECT_NE(unsafe_socket_directory_reason(dir.string()), "");
  fs::remove_all(dir);
}

TEST(UnixSocketSetup, CreatesTheSocketWithItsFinalModeInASafeDirectory) {
  const fs::path dir = fresh_dir("safe", 0755);
  EXPECT_EQ(unsafe_socket_directory_reason(dir.string()), "");
  auto fd = bind_unix_socket({(dir / "z.sock").string(), {}, {}, 0640, false});
  ASSERT_TRUE(fd.has_value()) << fd.error().to_string();
  struct stat info {};
  ASSERT_EQ(lstat((dir / "z.sock").c_str(), &info), 0);
  EXPECT_TRUE(S_ISSOCK(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0640u);
  close(*fd);
  fs::remove_all(dir);
}

// A swapper renames the fresh socket away and puts a symlink to a victim file in its place, as
// fast as it can, while the socket is set up again and again (in a directory it may write, as
// allowed with a warning). The victim's mode and group must never change.
TEST(UnixSocketSetup, A1_SymlinkSwapNeverReachesAnotherFile) {
  const fs::path dir = fresh_dir("race", 0777);
  const fs::path victim =
      fs::path(::testing::TempDir()) / ("zeusd_victim_" + std::to_string(getpid()));
  { std::ofstream(victim) << "secret\n"; }
  chmod(victim.c_str(), 0600);
  struct stat before {};
  ASSERT_EQ(stat(victim.c_str(), &before), 0);
  const std::string sock = (dir / "zeusd.sock").string();
  const std::string moved = (dir / "moved").string();
  std::atomic<bool> stop{false};
  std::atomic<long> swaps{0};
  std::thread swapper([&] {
    while (!stop.load()) {
      if (std::rename(sock.c_str(), moved.c_str()) == 0 &&
          symlink(victim.c_str(), sock.c_str()) == 0)
        ++swaps;
    }
  });
  // Another group than the victim's, so that a redirected chown would show.
  const gid_t group = before.st_gid == 65534 ? 0 : 65534;
  const bool root = geteuid() == 0;
  for (int i = 0; i < 400; ++i) {
    auto fd = bind_unix_socket({sock,
                                {},
                                root ? std::optional<gid_t>(group) : std::nullopt,
                                0666,
                                /*allow_unsafe_directory=*/true});
    if (fd) close(*fd);
    unlink(sock.c_str());
    unlink(moved.c_str());
  }
  stop.store(true);
  swapper.join();
  struct stat after {};
  ASSERT_EQ(stat(victim.c_str(), &after), 0);
  EXPECT_EQ(after.st_mode & 07777, 0600u) << "the victim's mode changed";
  EXPECT_EQ(after.st_gid, before.st_gid) << "the victim's group changed";
  EXPECT_EQ(after.st_uid, before.st_uid);
  RecordProperty("swaps", std::to_string(swaps.load()));
  fs::remove_all(dir);
  fs::remove(victim);
}

}  // namespace
}  // namespace zeus::zeusd
