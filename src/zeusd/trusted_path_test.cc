// Every directory on the way to zeusd's socket and lease journal is checked, as
// OpenSSH's StrictModes does — owners, group/other write, the sticky exception, symbolic links
// and "..". Trees are made under the test's temp dir; chown to uid 65534 (nobody) needs root.
#include "zeusd/trusted_path.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace zeus::zeusd {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kStranger = 65534;

class TrustedPath : public ::testing::Test {
 protected:
  void SetUp() override {
    top_ = fs::path(::testing::TempDir()) /
           ("zeusd_trusted_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(top_);
    fs::create_directories(top_);
    chmod(top_.c_str(), 0755);
  }
  void TearDown() override { fs::remove_all(top_); }

  // A directory under the test's top, made with `mode` (parents 0755).
  fs::path dir(const std::string& relative, mode_t mode = 0755) {
    const fs::path path = top_ / relative;
    fs::create_directories(path);
    chmod(path.c_str(), mode);
    return path;
  }
  static void give_away(const fs::path& path) {
    ASSERT_EQ(lchown(path.c_str(), kStranger, kStranger), 0) << path;
  }
  static bool root() { return geteuid() == 0; }

  fs::path top_;
};

TEST_F(TrustedPath, SafeTreeUnderTmpIsAccepted) {
  // /tmp (sticky, 1777) holds the top, owned by this process's user: accepted.
  const fs::path sub = dir("a/b/c");
  const auto bad = find_untrusted_path_entry(sub.string(), geteuid());
  EXPECT_FALSE(bad.has_value()) << bad->path << " " << bad->why;
  EXPECT_FALSE(find_untrusted_path_entry("/", geteuid()).has_value());
}

TEST_F(TrustedPath, AncestorOwnedByAnotherUserIsNamed) {
  if (!root()) GTEST_SKIP() << "needs root to chown";
  const fs::path theirs = dir("theirs");
  const fs::path sub = dir("theirs/sub/deeper");
  give_away(theirs);
  const auto bad = find_untrusted_path_entry(sub.string(), geteuid());
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->path, theirs.string());
  EXPECT_EQ(bad->why, "is owned by uid 65534, not root");
  EXPECT_EQ(bad->fix, "chown root " + theirs.string());
  // The trusted user (zeusd's own) may own it.
  EXPECT_FALSE(find_untrusted_path_entry(sub.string(), kStranger).has_value());
}

TEST_F(TrustedPath, GroupOrOtherWritableAncestorIsNamed) {
  const fs::path group = dir("group", 0775);
  const fs::path sub = dir("group/sub");
  auto bad = find_untrusted_path_entry(sub.string(), geteuid());
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->path, group.string());
  EXPECT_EQ(bad->why, "is writable by its group (mode 0775)");
  EXPECT_EQ(bad->fix, "chmod go-w " + group.string());
  chmod(group.c_str(), 0757);
  bad = find_untrusted_path_entry(sub.string(), geteuid());
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->why, "is writable by everyone (mode 0757)");
  // The directory itself, too.
  chmod(group.c_str(), 0755);
  chmod(sub.c_str(), 0770);
  bad = find_untrusted_path_entry(sub.string(), geteuid());
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->path, sub.string());
}

TEST_F(TrustedPath, StickyAncestorNeedsATrustedEntryInside) {
  const fs::path sticky = dir("sticky", 01777);
  const fs::path ours = dir("sticky/ours/sub");
  EXPECT_FALSE(find_untrusted_path_entry(ours.string(), geteuid()).has_value());
  // A sticky directory itself is no place for the socket: anyone can squat a name in it.
  auto bad = find_untrusted_path_entry(sticky.string(), geteuid());
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->path, sticky.string());
  EXPECT_EQ(bad->why, "is writable by everyone (mode 1777)");
  if (!root()) GTEST_SKIP() << "needs root to chown";
  // The entry inside the sticky directory belongs to someone else: they can replace what is in it.
  const fs::path theirs = dir("sticky/theirs");
  const fs::path inside = dir("sticky/theirs/sub");
  give_away(theirs);
  bad = find_untrusted_path_entry(inside.string(), geteuid());
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->path, theirs.string());
  EXPECT_NE(bad->why.find("inside " + sticky.string() + ", which others can write"),
            std::string::npos)
      << bad->why;
  // The same with a non-sticky world-writable directory is refused at that directory.
  chmod(sticky.c_str(), 0777);
  bad = find_untrusted_path_entry(ours.string(), geteuid());
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->path, sticky.string());
}

TEST_F(TrustedPath, SymbolicLinksAreFollowedAndTheirTargetsChecked) {
  const fs::path group = dir("group", 0775);
  const fs::path target = dir("group/target");
  const fs::path safe = dir("safe");
  // A link in a safe directory to a directory under an unsafe one: the target's path is checked.
  fs::create_directory_symlink(target, safe / "absolute");
  fs::create_directory_symlink("../group/target", safe / "relative");
  for (const char* link : {"absolute", "relative"}) {
    const auto bad = find_untrusted_path_entry((safe / link / ".").string(), geteuid());
    ASSERT_TRUE(bad.has_value()) << link;
    EXPECT_EQ(bad->path, group.string()) << link;
  }
  chmod(group.c_str(), 0755);
  EXPECT_FALSE(find_untrusted_path_entry((safe / "relative").string(), geteuid()).has_value());
  // A loop is refused, not followed for ever.
  fs::create_directory_symlink(safe / "loop", safe / "loop");
  const auto loop = find_untrusted_path_entry((safe / "loop").string(), geteuid());
  ASSERT_TRUE(loop.has_value());
  EXPECT_EQ(loop->why, "leads through too many symbolic links");
  if (!root()) GTEST_SKIP() << "needs root to chown";
  // In a sticky directory, a link someone else made is theirs to point anywhere.
  dir("sticky", 01777);
  const fs::path link = top_ / "sticky" / "link";
  fs::create_directory_symlink(safe, link);
  EXPECT_FALSE(find_untrusted_path_entry(link.string(), geteuid()).has_value());
  give_away(link);
  const auto bad = find_untrusted_path_entry(link.string(), geteuid());
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->path, link.string());
}

TEST_F(TrustedPath, DotDotAndRelativePathsAreResolved) {
  const fs::path group = dir("group", 0775);
  const fs::path safe = dir("safe");
  dir("group/sub");
  // "group/sub/../../safe" goes through group: refused there.
  auto bad = find_untrusted_path_entry((group / "sub" / ".." / ".." / "safe").string(), geteuid());
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->path, group.string());
  // ".." out of a safe directory into an unsafe parent is refused at the parent.
  chmod(group.c_str(), 0755);
  chmod(top_.c_str(), 0775);
  bad = find_untrusted_path_entry((safe / "..").string(), geteuid());
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->path, top_.string());
  chmod(top_.c_str(), 0755);
  // A relative path is taken from the working directory.
  const fs::path before = fs::current_path();
  fs::current_path(group);
  chmod(group.c_str(), 0775);
  bad = find_untrusted_path_entry("sub", geteuid());
  fs::current_path(before);
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->path, group.string());
  // A missing directory on the way is named.
  bad = find_untrusted_path_entry((safe / "missing" / "sub").string(), geteuid());
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->path, (safe / "missing").string());
}

}  // namespace
}  // namespace zeus::zeusd
