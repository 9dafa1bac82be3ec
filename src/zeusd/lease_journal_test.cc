#include "zeusd/lease_journal.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <gtest/gtest.h>

namespace zeus::zeusd {
namespace {

namespace fs = std::filesystem;

class LeaseJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir_template[] = "/tmp/zeusd_journal_XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    dir_ = dir_template;
    path_ = dir_ + "/zeusd-leases.json";
  }
  void TearDown() override { fs::remove_all(dir_); }

  void put(const std::string& text) const { std::ofstream(path_) << text; }
  std::string contents() const {
    std::ifstream in(path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // The files set aside as damaged.
  std::vector<std::string> set_aside() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      const std::string name = entry.path().filename();
      if (name.rfind("zeusd-leases.json.damaged-", 0) == 0) names.push_back(name);
    }
    return names;
  }

  static Lease full_lease() {
    Lease lease;
    lease.gpu = 1;
    lease.gpu_uuid = "GPU-00000000-fake-0000-0000-000000000001";
    lease.pid = 4242;
    lease.pid_start_ticks = 239855;
    lease.uid = 1000;
    lease.saved.power_limit_mw = 700000;
    lease.saved.persistence_mode = false;
    lease.saved.sm_clocks_locked = true;
    lease.saved.memory_clocks_locked = true;
    return lease;
  }

  std::string dir_;
  std::string path_;
};

TEST_F(LeaseJournalTest, EveryKnobAndTheHolderSurviveARoundTrip) {
  Lease partial;
  partial.gpu = 0;
  partial.pid = 7;
  partial.saved.power_limit_mw = 250000;
  LeaseJournal journal(path_, "boot-1");
  ASSERT_TRUE(journal.write({partial, full_lease()}).has_value());
  const JournalContents read = LeaseJournal(path_, "boot-2").read();
  EXPECT_EQ(read.problem, "");
  EXPECT_EQ(read.boot_id, "boot-1");
  ASSERT_EQ(read.leases.size(), 2u);
  EXPECT_EQ(read.leases[0], partial);
  EXPECT_EQ(read.leases[1], full_lease());
  // Root only: zeusd acts on what it reads.
  struct stat info {};
  ASSERT_EQ(stat(path_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  // No leases: an empty list, not a missing file.
  ASSERT_TRUE(journal.write({}).has_value());
  EXPECT_TRUE(LeaseJournal(path_, "boot-1").read().leases.empty());
  EXPECT_FALSE(fs::exists(path_ + ".tmp"));
}

TEST_F(LeaseJournalTest, ASessionLeaseKeepsItsSessionAndAPidOfZero) {
  Lease session_lease;
  session_lease.gpu = 1;
  session_lease.pid = 0;
  session_lease.session = "0123456789abcdef0123456789abcdef";
  session_lease.saved.power_limit_mw = 300000;
  LeaseJournal journal(path_, "boot-1");
  ASSERT_TRUE(journal.write({session_lease}).has_value());
  const JournalContents read = LeaseJournal(path_, "boot-1").read();
  EXPECT_EQ(read.problem, "");
  ASSERT_EQ(read.leases.size(), 1u);
  EXPECT_EQ(read.leases[0], session_lease);
  // pid 0 without a session is still refused.
  auto decoded = decode_journal(R"({"format": "zeusd-leases", "version": 1, "boot_id": "b",
      "leases": [{"gpu": 0, "pid": 0, "uid": 0, "restores": {}}]})");
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_TRUE(decoded->leases.empty());
  ASSERT_EQ(decoded->rejected.size(), 1u);
  EXPECT_NE(decoded->rejected[0].find("pid must be a positive integer"), std::string::npos)
      << decoded->rejected[0];
}

TEST_F(LeaseJournalTest, MissingJournalIsAnEmptyOne) {
  const JournalContents read = LeaseJournal(path_, "boot-1").read();
  EXPECT_EQ(read.problem, "");
  EXPECT_TRUE(read.leases.empty());
}

TEST_F(LeaseJournalTest, DamagedJournalIsReportedAndSetAsideNeverThrown) {
  const std::string good = encode_journal({full_lease()}, "boot-1");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "not a JSON object"},
      {good.substr(0, good.size() / 2), "not a JSON object"},  // a torn write
      {std::string("\0\xff\xfe garbage", 12), "not a JSON object"},
      {std::string(100000, '['), "not a JSON object"},
      {R"({"format": "something-else", "version": 1, "leases": []})", "not a zeusd lease journal"},
      {R"({"format": "zeusd-leases", "version": 2, "leases": []})", "journal version 2"},
      {R"({"format": "zeusd-leases", "version": 1, "leases": {}})", "leases must be an array"},
      {R"({"format": "zeusd-leases", "version": 1, "boot_id": 7, "leases": []})",
       "boot_id must be a string"},
  };
  for (const auto& [text, reason] : cases) {
    fs::remove_all(dir_);
    fs::create_directory(dir_);
    put(text);
    LeaseJournal journal(path_, "boot-1");
    const JournalContents read = journal.read();
    EXPECT_TRUE(read.leases.empty());
    EXPECT_NE(read.problem.find("is damaged ("), std::string::npos) << read.problem;
    EXPECT_NE(read.problem.find(reason), std::string::npos)
        << text.substr(0, 80) << " -> " << read.problem;
    EXPECT_NE(read.problem.find("set aside as " + path_ + ".damaged-"), std::string::npos);
    EXPECT_FALSE(fs::exists(path_));
    EXPECT_EQ(set_aside().size(), 1u);
    // The next write starts a fresh journal.
    ASSERT_TRUE(journal.write({full_lease()}).has_value());
    EXPECT_EQ(LeaseJournal(path_, "boot-1").read().leases.size(), 1u);
  }
}

// One bad lease costs only itself. Each bad entry below sits between two valid
// leases (GPU 0 and GPU 2); both valid ones are kept, the bad one is named with why, the file
// stays in place until the next write replaces it, and a copy of it is kept for the operator.
TEST_F(LeaseJournalTest, EveryLeaseThatValidatesIsKeptAndEachBadOneIsNamed) {
  const std::string valid0 = R"({"gpu": 0, "gpu_uuid": "GPU-0", "pid": 3, "uid": 0,
      "restores": {"power_limit_mw": 1}})";
  const std::string valid2 = R"({"gpu": 2, "gpu_uuid": "GPU-2", "pid": 5, "uid": 0,
      "restores": {}})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("not an object")", "lease 1: not an object"},
      {R"({"gpu": -1, "pid": 3, "uid": 0, "restores": {}})", "lease 1 (GPU -1, pid 3): gpu must"},
      {R"({"gpu": 1, "pid": 0, "uid": 0, "restores": {}})",
       "lease 1 (GPU 1, pid 0): pid must be a positive integer"},
      {R"({"gpu": 1, "pid": 4, "restores": {}})", "lease 1 (GPU 1, pid 4): uid must be"},
      {R"({"gpu": 1, "pid": 4, "uid": 0, "restores": {"power_limit_mw": "700000"}})",
       "restores.power_limit_mw must be a limit in mW"},
      {R"({"gpu": 1, "pid": 4, "uid": 0, "restores": {"sm_clocks_locked": 1}})",
       "restores.sm_clocks_locked must be true or false"},
      {R"({"gpu": 1, "pid": 4, "uid": 0, "gpu_uuid": 5, "restores": {}})",
       "gpu_uuid must be a string"},
      {R"({"gpu": 1, "pid": 4, "uid": 0})", "restores must be an object"},
      {R"({"gpu": 0, "pid": 4, "uid": 0, "restores": {}})",
       "lease 1 (GPU 0, pid 4): GPU 0 is leased twice (lease 0 holds it already)"},
      {R"({"gpu": 1, "gpu_uuid": "GPU-0", "pid": 4, "uid": 0, "restores": {}})",
       "lease 1 (GPU 1, pid 4): GPU GPU-0 is leased twice (lease 0 holds it already)"},
  };
  for (const auto& [entry, reason] : cases) {
    fs::remove_all(dir_);
    fs::create_directory(dir_);
    const std::string head = R"({"format": "zeusd-leases", "version": 1, "boot_id": "b",
        "leases": [)";
    const std::string text = head + valid0 + "," + entry + "," + valid2 + "]}";
    put(text);
    LeaseJournal journal(path_, "boot-1");
    const JournalContents read = journal.read();
    ASSERT_EQ(read.leases.size(), 2u) << entry << " -> " << read.problem;
    EXPECT_EQ(read.leases[0].gpu, 0);
    EXPECT_EQ(read.leases[0].saved.power_limit_mw, 1u);
    EXPECT_EQ(read.leases[1].gpu, 2);
    EXPECT_EQ(read.boot_id, "b");
    ASSERT_EQ(read.rejected.size(), 1u) << entry;
    EXPECT_NE(read.rejected[0].find(reason), std::string::npos) << read.rejected[0];
    EXPECT_NE(read.problem.find(read.rejected[0]), std::string::npos) << read.problem;
    EXPECT_NE(read.problem.find("has 1 lease that cannot be used, so it is not restored"),
              std::string::npos)
        << read.problem;
    EXPECT_NE(read.problem.find("the other 2 leases are used"), std::string::npos) << read.problem;
    EXPECT_NE(read.problem.find("kept as " + path_ + ".damaged-"), std::string::npos)
        << read.problem;
    EXPECT_EQ(contents(), text) << "the journal must stay until it is written again";
    ASSERT_EQ(set_aside().size(), 1u);
    std::ifstream copy(dir_ + "/" + set_aside()[0]);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(copy), {}), text);
    // The next write replaces it (here, with the good leases only).
    ASSERT_TRUE(journal.write(read.leases).has_value());
    const JournalContents again = LeaseJournal(path_, "boot-1").read();
    EXPECT_EQ(again.problem, "");
    EXPECT_EQ(again.leases, read.leases);
  }
}

// The journal of e2e.zeusd_partial_journal_restores_good_leases: a valid lease on GPU 0, then
// the same lease on GPU 1 twice.
TEST_F(LeaseJournalTest, ProbeJournalKeepsGpu0AndTheFirstLeaseOfGpu1) {
  const std::string lease1 = R"({"gpu":1,"gpu_uuid":"GPU-1","pid":999998,"pid_start_ticks":1,
      "restores":{"power_limit_mw":700000,"sm_clocks_locked":false,"memory_clocks_locked":false},
      "uid":1001})";
  put(R"({"boot_id":"b","format":"zeusd-leases","version":1,"leases":[{"gpu":0,"gpu_uuid":"GPU-0",
      "pid":999999,"pid_start_ticks":1,"restores":{"power_limit_mw":700000,
      "sm_clocks_locked":false,"memory_clocks_locked":false},"uid":1001},)" +
      lease1 + "," + lease1 + "]}");
  const JournalContents read = LeaseJournal(path_, "boot-1").read();
  ASSERT_EQ(read.leases.size(), 2u) << read.problem;
  EXPECT_EQ(read.leases[0].gpu, 0);
  EXPECT_EQ(read.leases[0].pid, 999999);
  EXPECT_EQ(read.leases[1].gpu, 1);
  ASSERT_EQ(read.rejected.size(), 1u);
  EXPECT_EQ(read.rejected[0],
            "lease 2 (GPU 1, pid 999998): GPU 1 is leased twice (lease 1 holds it already)");
}

// A journal file that someone other than root owns, or that others may write, may hold planted
// leases: it is set aside whole, none of it is used (as an unsafe socket directory is refused).
TEST_F(LeaseJournalTest, AJournalFileOthersCouldWriteIsNotUsed) {
  const std::string good = encode_journal({full_lease()}, "boot-1");
  for (const mode_t mode : {0620, 0602}) {
    put(good);
    chmod(path_.c_str(), mode);
    const JournalContents read = LeaseJournal(path_, "boot-1").read();
    EXPECT_TRUE(read.leases.empty());
    EXPECT_NE(read.problem.find(mode == 0620 ? "it is writable by its group"
                                             : "it is writable by everyone"),
              std::string::npos)
        << read.problem;
    EXPECT_FALSE(fs::exists(path_));
    fs::remove_all(dir_);
    fs::create_directory(dir_);
  }
  if (geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  put(good);
  chmod(path_.c_str(), 0600);
  ASSERT_EQ(chown(path_.c_str(), 65534, 65534), 0);
  const JournalContents read = LeaseJournal(path_, "boot-1").read();
  EXPECT_TRUE(read.leases.empty());
  EXPECT_NE(read.problem.find("it is owned by uid 65534, not root"), std::string::npos)
      << read.problem;
}

TEST_F(LeaseJournalTest, ASymlinkOrDirectoryAtThePathIsNotFollowed) {
  const std::string victim = dir_ + "/victim";
  std::ofstream(victim) << encode_journal({full_lease()}, "boot-1");
  ASSERT_EQ(symlink(victim.c_str(), path_.c_str()), 0);
  JournalContents read = LeaseJournal(path_, "boot-1").read();
  EXPECT_TRUE(read.leases.empty());
  EXPECT_NE(read.problem.find("symbolic link"), std::string::npos) << read.problem;
  fs::remove(path_);
  fs::create_directory(path_);
  read = LeaseJournal(path_, "boot-1").read();
  EXPECT_NE(read.problem.find("not a regular file"), std::string::npos) << read.problem;
  // A link planted at the temporary path is replaced, never written through.
  fs::remove_all(path_);
  ASSERT_EQ(symlink(victim.c_str(), (path_ + ".tmp").c_str()), 0);
  ASSERT_TRUE(LeaseJournal(path_, "boot-1").write({}).has_value());
  EXPECT_EQ(LeaseJournal(victim, "boot-1").read().leases.size(), 1u);
}

TEST_F(LeaseJournalTest, AnUnreadableJournalIsReportedButNotSetAside) {
  std::ofstream(dir_ + "/file") << "not a directory";
  const JournalContents read = LeaseJournal(dir_ + "/file/zeusd-leases.json", "boot-1").read();
  EXPECT_TRUE(read.leases.empty());
  EXPECT_NE(read.problem.find("cannot read the lease journal"), std::string::npos) << read.problem;
  EXPECT_TRUE(set_aside().empty());
  EXPECT_TRUE(fs::is_regular_file(dir_ + "/file"));
}

TEST_F(LeaseJournalTest, OneZeusdAtATimeHoldsTheJournal) {
  auto first = std::make_unique<LeaseJournal>(path_, "boot-1");
  ASSERT_TRUE(first->lock().has_value());
  // A second zeusd (here: another open file description) is refused before it reads anything.
  LeaseJournal second(path_, "boot-1");
  auto refused = second.lock();
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(
      refused.error().message.find("another zeusd is already serving (it holds the lease journal"),
      std::string::npos)
      << refused.error().message;
  first.reset();  // the first one exits
  EXPECT_TRUE(second.lock().has_value());
}

TEST_F(LeaseJournalTest, AnUnwritableJournalIsAnErrorNamingTheFix) {
  LeaseJournal journal(dir_ + "/missing/zeusd-leases.json", "boot-1");
  auto written = journal.write({full_lease()});
  ASSERT_FALSE(written.has_value());
  EXPECT_EQ(written.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(written.error().message.find("--lease-journal"), std::string::npos);
}

}  // namespace
}  // namespace zeus::zeusd
