// The socket's owner and mode can never be redirected to another file, a
// directory on the socket's path that others can write is refused, and only zeusd's own socket
// file is ever removed.
#include "zeusd/unix_socket_setup.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "zeusd/trusted_path.h"

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
  EXPECT_TRUE(find_untrusted_path_entry(dir.string(), geteuid()).has_value());
  fs::remove_all(dir);
}

TEST(UnixSocketSetup, CreatesTheSocketWithItsFinalModeInASafeDirectory) {
  const fs::path dir = fresh_dir("safe", 0755);
  EXPECT_FALSE(find_untrusted_path_entry(dir.string(), geteuid()).has_value());
  auto fd = bind_unix_socket({(dir / "z.sock").string(), {}, {}, 0640, false});
  ASSERT_TRUE(fd.has_value()) << fd.error().to_string();
  struct stat info {};
  ASSERT_EQ(lstat((dir / "z.sock").c_str(), &info), 0);
  EXPECT_TRUE(S_ISSOCK(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0640u);
  close(fd->fd);
  fs::remove_all(dir);
}

// A swapper renames the fresh socket away and puts a symlink to a victim file in its place, as
// fast as it can, while the socket is set up again and again (in a directory it may write, as
// allowed with a warning). The victim's mode and group must never change.
TEST(UnixSocketSetup, SymlinkSwapNeverReachesAnotherFile) {
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
    if (fd) close(fd->fd);
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

// A directory two levels up owned by another user (who could rename the socket's
// directory away and put their own in its place) is refused, by name, with the fix; the same
// tree with that directory given back to root is accepted.
TEST(UnixSocketSetup, RefusesAnAncestorOwnedByAnotherUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to chown a directory to another user";
  const fs::path top = fresh_dir("a4_owner", 0755);
  const fs::path theirs = top / "theirs";
  const fs::path dir = theirs / "sub";
  fs::create_directories(dir);
  chmod(theirs.c_str(), 0755);
  chmod(dir.c_str(), 0755);
  ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);
  auto fd = bind_unix_socket({(dir / "z.sock").string(), {}, {}, 0660, false});
  ASSERT_FALSE(fd.has_value());
  EXPECT_EQ(fd.error().code, ErrorCode::kPermissionDenied);
  const std::string& message = fd.error().message;
  EXPECT_NE(message.find(theirs.string() + " is owned by uid 65534"), std::string::npos) << message;
  EXPECT_NE(message.find("chown root " + theirs.string()), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(dir / "z.sock"));
  // Allowed: only a warning, and the socket is made.
  auto warned = bind_unix_socket({(dir / "z.sock").string(), {}, {}, 0660, true});
  ASSERT_TRUE(warned.has_value()) << warned.error().to_string();
  close(warned->fd);
  fs::remove(dir / "z.sock");
  ASSERT_EQ(chown(theirs.c_str(), 0, 0), 0);
  auto fixed = bind_unix_socket({(dir / "z.sock").string(), {}, {}, 0660, false});
  ASSERT_TRUE(fixed.has_value()) << fixed.error().to_string();
  close(fixed->fd);
  fs::remove_all(top);
}

// The lease journal's directory goes through the same check (tools/zeusd).
TEST(UnixSocketSetup, JournalDirectoryWithAGroupWritableAncestorIsRefused) {
  const fs::path top = fresh_dir("a4_journal", 0755);
  const fs::path shared = top / "shared";
  fs::create_directories(shared / "zeusd");
  chmod(shared.c_str(), 0775);
  chmod((shared / "zeusd").c_str(), 0755);
  const std::string what = "the lease journal's directory";
  auto safe =
      ensure_root_only_directory((shared / "zeusd").string(), what, "planted leases", false);
  ASSERT_FALSE(safe.has_value());
  EXPECT_NE(safe.error().message.find(shared.string() + " is writable by its group (mode 0775)"),
            std::string::npos)
      << safe.error().message;
  EXPECT_NE(safe.error().message.find("chmod go-w " + shared.string()), std::string::npos);
  EXPECT_TRUE(
      ensure_root_only_directory((shared / "zeusd").string(), what, "planted leases", true));
  fs::remove_all(top);
}

// At stop only the socket file zeusd bound is removed. Someone who moved the
// socket's directory away and put another socket (or any file) at its path keeps it.
TEST(UnixSocketSetup, RemovesOnlyTheSocketItBound) {
  const fs::path dir = fresh_dir("a4_inode", 0755);
  const std::string path = (dir / "z.sock").string();
  auto bound = bind_unix_socket({path, {}, {}, 0660, false});
  ASSERT_TRUE(bound.has_value()) << bound.error().to_string();
  ASSERT_EQ(std::rename(path.c_str(), (dir / "ours.sock").c_str()), 0);
  auto impostor = bind_unix_socket({path, {}, {}, 0660, false});  // another socket, same path
  ASSERT_TRUE(impostor.has_value()) << impostor.error().to_string();
  EXPECT_FALSE(remove_unix_socket(path, *bound));
  EXPECT_TRUE(fs::exists(path)) << "another socket at the path was removed";
  EXPECT_TRUE(remove_unix_socket(path, *impostor));
  EXPECT_FALSE(fs::exists(path));
  { std::ofstream(path) << "not a socket\n"; }
  EXPECT_FALSE(remove_unix_socket(path, *bound));
  EXPECT_TRUE(fs::exists(path));
  // Put back, it is ours again.
  fs::remove(path);
  ASSERT_EQ(std::rename((dir / "ours.sock").c_str(), path.c_str()), 0);
  EXPECT_TRUE(remove_unix_socket(path, *bound));
  EXPECT_FALSE(fs::exists(path));
  close(bound->fd);
  close(impostor->fd);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace zeus::zeusd
