// ZeusdService with a lease journal: write-ahead of every change, and what recover() makes of a
// journal a killed zeusd left.
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include <gtest/gtest.h>

#include "zeus/common/log.h"
#include "zeus/device/replay_gpu.h"
#include "zeusd/process_identity.h"
#include "zeusd/zeusd_service.h"

namespace zeus::zeusd {
namespace {

namespace fs = std::filesystem;

// Processes that "run": pid -> start ticks. watch() fails for the others.
class FakeProcesses final : public ProcessWatcher {
 public:
  Result<void> watch(int pid) override {
    if (!live.count(pid)) return fail(ErrorCode::kNotFound, "process has exited");
    watched.insert(pid);
    return ok();
  }
  std::optional<uint64_t> start_ticks(int pid) override {
    auto it = live.find(pid);
    return it == live.end() ? std::nullopt : std::optional<uint64_t>(it->second);
  }
  std::map<int, uint64_t> live;
  std::set<int> watched;
};

Peer controller(int pid) {
  Peer p;
  p.uid = 1000;
  p.gid = 1000;
  p.pid = pid;
  return p;
}

HttpRequest post_limit(int gpu, uint32_t limit_mw) {
  HttpRequest request;
  request.method = "POST";
  std::string why;
  ZEUS_CHECK(http::decode_target("/gpu/set_power_limit?gpu_ids=" + std::to_string(gpu) +
                                     "&power_limit_mw=" + std::to_string(limit_mw) + "&block=true",
                                 &request, &why),
             why);
  return request;
}

class ServiceRecoveryTest : public ::testing::Test {
 protected:
  ServiceRecoveryTest() {
    char dir_template[] = "/tmp/zeusd_recovery_XXXXXX";
    ZEUS_CHECK(mkdtemp(dir_template) != nullptr, "mkdtemp");
    dir_ = dir_template;
    journal_path_ = dir_ + "/zeusd-leases.json";
    for (int i = 0; i < 2; ++i) {
      ReplayGpuConfig config;
      config.uuid = "GPU-replay-" + std::to_string(i);
      config.physical_index = i;
      config.power_model = ReplayGpu::capped_power_model(250.0);
      auto gpu = std::make_unique<ReplayGpu>(clock_, config);
      gpus_.push_back(gpu.get());
      devices_.gpus.push_back(std::move(gpu));
    }
    previous_level_ = log_level();
    set_log_level(LogLevel::kInfo);  // the recovery's decisions are logged at info
    set_log_sink([this](LogLevel level, std::string_view message) {
      std::lock_guard<std::mutex> lock(log_mutex_);
      log_ += std::to_string(static_cast<int>(level)) + " " + std::string(message) + "\n";
    });
  }
  ~ServiceRecoveryTest() override {
    set_log_sink(nullptr);
    set_log_level(previous_level_);
    fs::remove_all(dir_);
  }

  // A zeusd (re)started on the journal.
  std::unique_ptr<ZeusdService> start_zeusd() {
    journal_ = std::make_unique<LeaseJournal>(journal_path_, current_boot_id());
    AllowList allow;
    ZEUS_CHECK(allow.add("gpu-control=1000").has_value(), "allow");
    return std::make_unique<ZeusdService>(devices_, std::move(allow), processes_, journal_.get());
  }
  uint32_t limit_mw(int gpu) { return *gpus_[gpu]->power_limit_mw(); }
  JournalContents journal_on_disk() const {
    return LeaseJournal(journal_path_, current_boot_id()).read();
  }
  std::string log() {
    std::lock_guard<std::mutex> lock(log_mutex_);
    return log_;
  }

  FakeClock clock_;
  Devices devices_;
  std::vector<ReplayGpu*> gpus_;
  FakeProcesses processes_;
  std::string dir_;
  std::string journal_path_;
  std::unique_ptr<LeaseJournal> journal_;
  std::mutex log_mutex_;
  std::string log_;
  LogLevel previous_level_ = LogLevel::kWarning;
};

TEST_F(ServiceRecoveryTest, EveryLeaseIsOnDiskBeforeItsChangeAndGoneAfterItsRestore) {
  processes_.live = {{4242, 777}};
  auto zeusd = start_zeusd();
  zeusd->recover();
  ASSERT_EQ(zeusd->handle(post_limit(1, 250000), controller(4242)).status, 200);
  JournalContents journal = journal_on_disk();
  ASSERT_EQ(journal.leases.size(), 1u);
  EXPECT_EQ(journal.leases[0].gpu, 1);
  EXPECT_EQ(journal.leases[0].gpu_uuid, "GPU-replay-1");
  EXPECT_EQ(journal.leases[0].pid, 4242);
  EXPECT_EQ(journal.leases[0].pid_start_ticks, 777u);
  EXPECT_EQ(journal.leases[0].saved.power_limit_mw, 300000u);
  zeusd->on_process_exit(4242);
  EXPECT_EQ(limit_mw(1), 300000u);
  EXPECT_TRUE(journal_on_disk().leases.empty());
}

TEST_F(ServiceRecoveryTest, ChangeIsRefusedWhenItsLeaseCannotBeRecorded) {
  journal_path_ = dir_ + "/missing/zeusd-leases.json";
  processes_.live = {{4242, 777}};
  auto zeusd = start_zeusd();
  const HttpResponse response = zeusd->handle(post_limit(1, 250000), controller(4242));
  EXPECT_EQ(response.status, 500) << response.body;
  EXPECT_NE(response.body.find("was not changed"), std::string::npos) << response.body;
  EXPECT_EQ(limit_mw(1), 300000u);
  EXPECT_TRUE(zeusd->leases().empty());
}

TEST_F(ServiceRecoveryTest, RestartAfterTheClientDiedRestoresItsGpu) {
  processes_.live = {{4242, 777}};
  {
    auto zeusd = start_zeusd();  // killed with its lease: no restore_all()
    ASSERT_EQ(zeusd->handle(post_limit(1, 250000), controller(4242)).status, 200);
  }
  processes_.live.clear();  // the client exits while zeusd is down
  ASSERT_EQ(limit_mw(1), 250000u);
  auto zeusd = start_zeusd();
  zeusd->recover();
  EXPECT_EQ(limit_mw(1), 300000u);
  EXPECT_TRUE(zeusd->leases().empty());
  EXPECT_TRUE(journal_on_disk().leases.empty());
  EXPECT_NE(log().find("pid 4242 (uid 1000) exited while zeusd was down"), std::string::npos)
      << log();
}

TEST_F(ServiceRecoveryTest, RestartWhileTheClientRunsReadoptsItsLease) {
  processes_.live = {{4242, 777}};
  {
    auto zeusd = start_zeusd();
    ASSERT_EQ(zeusd->handle(post_limit(1, 250000), controller(4242)).status, 200);
  }
  processes_.watched.clear();
  auto zeusd = start_zeusd();
  zeusd->recover();
  EXPECT_EQ(limit_mw(1), 250000u);  // the job keeps its setting
  EXPECT_EQ(processes_.watched, std::set<int>{4242});
  ASSERT_EQ(zeusd->leases().size(), 1u);
  // The lease holds again: another process, root too, gets 409.
  Peer root = controller(99);
  root.uid = 0;
  EXPECT_EQ(zeusd->handle(post_limit(1, 200000), root).status, 409);
  zeusd->on_process_exit(4242);
  EXPECT_EQ(limit_mw(1), 300000u);
  EXPECT_TRUE(journal_on_disk().leases.empty());
}

TEST_F(ServiceRecoveryTest, ReusedPidIsNotMistakenForTheClient) {
  processes_.live = {{4242, 777}};
  {
    auto zeusd = start_zeusd();
    ASSERT_EQ(zeusd->handle(post_limit(0, 150000), controller(4242)).status, 200);
  }
  processes_.live = {{4242, 123456}};  // the client died, another process got its pid
  auto zeusd = start_zeusd();
  zeusd->recover();
  EXPECT_EQ(limit_mw(0), 300000u);
  EXPECT_TRUE(zeusd->leases().empty());
}

TEST_F(ServiceRecoveryTest, LeaseFindsItsGpuByUuidWhenIndicesChange) {
  Lease lease;
  lease.gpu = 0;  // was GPU 0 when recorded; that UUID is GPU 1 now
  lease.gpu_uuid = "GPU-replay-1";
  lease.pid = 4242;
  lease.saved.power_limit_mw = 280000;
  ASSERT_TRUE(LeaseJournal(journal_path_, current_boot_id()).write({lease}).has_value());
  auto zeusd = start_zeusd();
  zeusd->recover();
  EXPECT_EQ(limit_mw(1), 280000u);
  EXPECT_TRUE(gpus_[0]->power_limit_history_mw().empty());
  // A GPU the machine no longer has is reported, not guessed.
  lease.gpu_uuid = "GPU-gone";
  ASSERT_TRUE(LeaseJournal(journal_path_, current_boot_id()).write({lease}).has_value());
  start_zeusd()->recover();
  EXPECT_NE(log().find("GPU-gone), which this machine no longer has"), std::string::npos) << log();
}

TEST_F(ServiceRecoveryTest, AJournalNamingOneGpuTwiceNeverCrashesZeusd) {
  Lease first, second;
  first.gpu = 0;
  second.gpu = 1;
  first.gpu_uuid = second.gpu_uuid = "GPU-replay-1";  // both are GPU 1 by UUID
  first.pid = 4242;
  second.pid = 4243;
  first.saved.power_limit_mw = second.saved.power_limit_mw = 280000;
  ASSERT_TRUE(LeaseJournal(journal_path_, current_boot_id()).write({first, second}).has_value());
  processes_.live = {{4242, 0}, {4243, 0}};
  auto zeusd = start_zeusd();
  zeusd->recover();
  ASSERT_EQ(zeusd->leases().size(), 1u);
  EXPECT_EQ(zeusd->leases()[0].pid, 4242);
  EXPECT_NE(log().find("lease 1 (GPU 1, pid 4243): GPU GPU-replay-1 is leased twice"),
            std::string::npos)
      << log();
}

// One bad lease costs only itself: GPU 0 was left at 200 W by a dead client whose lease is valid;
// GPU 1's lease is in the journal twice. GPU 0 is restored; GPU 1's first lease too; the
// duplicate is named.
TEST_F(ServiceRecoveryTest, AValidLeaseIsRestoredWhenAnotherLeaseIsBad) {
  ASSERT_TRUE(gpus_[0]->set_power_limit_mw(200000).has_value());
  ASSERT_TRUE(gpus_[1]->set_power_limit_mw(250000).has_value());
  const std::string lease1 = R"({"gpu":1,"gpu_uuid":"GPU-replay-1","pid":999998,"uid":1001,
      "pid_start_ticks":1,"restores":{"power_limit_mw":280000}})";
  {
    std::ofstream(journal_path_) << R"({"format":"zeusd-leases","version":1,"boot_id":")" +
                                        current_boot_id() + R"(","leases":[
        {"gpu":0,"gpu_uuid":"GPU-replay-0","pid":999999,"uid":1001,"pid_start_ticks":1,
         "restores":{"power_limit_mw":300000}},)" +
                                        lease1 + "," + lease1 + "]}";
  }
  auto zeusd = start_zeusd();
  zeusd->recover();
  EXPECT_EQ(limit_mw(0), 300000u) << log();
  EXPECT_EQ(limit_mw(1), 280000u) << log();
  EXPECT_NE(log().find("lease 2 (GPU 1, pid 999998): GPU 1 is leased twice"), std::string::npos)
      << log();
  EXPECT_NE(log().find("pid 999999 (uid 1001) exited while zeusd was down (from the lease "
                       "journal): restore power limit 300000 mW on GPU 0"),
            std::string::npos)
      << log();
  // The journal now holds what zeusd holds: nothing.
  const JournalContents after = journal_on_disk();
  EXPECT_EQ(after.problem, "");
  EXPECT_TRUE(after.leases.empty());
}

TEST_F(ServiceRecoveryTest, DamagedJournalIsReportedAndZeusdStillServes) {
  { std::ofstream(journal_path_) << "{\"format\": \"zeusd-leases\", \"vers"; }
  processes_.live = {{4242, 777}};
  auto zeusd = start_zeusd();
  zeusd->recover();
  EXPECT_NE(log().find("is damaged"), std::string::npos) << log();
  EXPECT_NE(log().find("set aside as"), std::string::npos) << log();
  EXPECT_EQ(zeusd->handle(post_limit(1, 250000), controller(4242)).status, 200);
  EXPECT_EQ(journal_on_disk().leases.size(), 1u);
}

TEST_F(ServiceRecoveryTest, GpuAwayFromItsDefaultWithNoLeaseIsWarnedAtStart) {
  ASSERT_TRUE(gpus_[1]->set_power_limit_mw(250000).has_value());
  auto zeusd = start_zeusd();
  zeusd->recover();
  EXPECT_NE(log().find("GPU 1 (GPU-replay-1) has power limit 250000 mW, not its default 300000 "
                       "mW, and no lease will restore it"),
            std::string::npos)
      << log();
  EXPECT_EQ(log().find("GPU 0 ("), std::string::npos) << log();
}

}  // namespace
}  // namespace zeus::zeusd
