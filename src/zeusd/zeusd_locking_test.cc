// A slow GPU command (a command override taking seconds) holds up only the
// next change of its own GPU: /discover, /leases, reads and the other GPUs answer at once,
// while the command runs and while a process's exit restores through it.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <set>
#include <thread>

#include "zeus/common/clock.h"
#include "zeus/device/replay_gpu.h"
#include "zeusd/command_overrides.h"
#include "zeusd/override_gpu.h"
#include "zeusd/zeusd_service.h"

namespace zeus::zeusd {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class WatchEveryone final : public ProcessWatcher {
 public:
  Result<void> watch(int) override { return ok(); }
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class ZeusdLockingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("zeusd_locking_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    const fs::path script = dir_ / "slow_on_gpu0.sh";
    std::ofstream(script) << "#!/bin/sh\nif [ \"$1\" = 0 ]; then sleep 2; fi\nexit 0\n";
    fs::permissions(script, fs::perms::owner_all);
    auto overrides = CommandOverrides::parse(
        "[set_power_limit]\ncommands = [\"" + script.string() + " {gpu_id}\"]\n", "test.toml");
    ASSERT_TRUE(overrides) << overrides.error().message;
    auto shared = std::make_shared<const CommandOverrides>(std::move(*overrides));
    for (int i = 0; i < 2; ++i) {
      ReplayGpuConfig config;
      config.uuid = "GPU-lock-" + std::to_string(i);
      config.power_model = ReplayGpu::capped_power_model(250.0);
      devices_.gpus.push_back(
          std::make_unique<OverrideGpu>(std::make_unique<ReplayGpu>(clock_, config), i, shared));
    }
    AllowList allow;
    ASSERT_TRUE(allow.add("gpu-control=1000"));
    ASSERT_TRUE(allow.add("gpu-read=1000"));
    service_ = std::make_unique<ZeusdService>(devices_, std::move(allow), watcher_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  HttpResponse call(int pid, const std::string& method, const std::string& target) {
    HttpRequest request;
    request.method = method;
    std::string why;
    EXPECT_TRUE(http::decode_target(target, &request, &why)) << why;
    Peer who;
    who.uid = who.gid = 1000;
    who.pid = pid;
    return service_->handle(request, who);
  }

  // Every other route answers within `limit_s` while GPU 0's command runs.
  void expect_others_answer_at_once(double limit_s) {
    for (const auto& [method, path] : std::vector<std::pair<std::string, std::string>>{
             {"GET", "/discover"},
             {"GET", "/leases"},
             {"GET", "/gpu/get_power_limit?gpu_ids=0"},
             {"GET", "/gpu/get_power?gpu_ids=1"},
             {"POST", set_limit(1, 200000)},
             {"GET", "/gpu/get_power_limit?gpu_ids=0,1"}}) {
      const auto start = Clock::now();
      const HttpResponse answer = call(77, method, path);
      EXPECT_LT(seconds_since(start), limit_s) << method << " " << path;
      EXPECT_EQ(answer.status, 200) << method << " " << path << ": " << answer.body;
    }
  }

  static std::string set_limit(int gpu, int mw) {
    return "/gpu/set_power_limit?gpu_ids=" + std::to_string(gpu) +
           "&power_limit_mw=" + std::to_string(mw) + "&block=true";
  }

  fs::path dir_;
  FakeClock clock_;
  Devices devices_;
  WatchEveryone watcher_;
  std::unique_ptr<ZeusdService> service_;
};

TEST_F(ZeusdLockingTest, ZeusdLocks_ASlowCommandHoldsUpOnlyItsOwnGpu) {
  const auto start = Clock::now();
  auto slow = std::async(std::launch::async, [&] {
    return call(42, "POST", set_limit(0, 150000));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  expect_others_answer_at_once(0.5);
  const HttpResponse done = slow.get();
  EXPECT_EQ(done.status, 200) << done.body;
  EXPECT_GE(seconds_since(start), 1.9) << "the command did not run";
  ASSERT_EQ(service_->leases().size(), 2u);  // pid 42 on GPU 0, pid 77 on GPU 1

  // The restore when pid 42 exits runs the slow command again: nobody else waits for it.
  auto restoring = std::async(std::launch::async, [&] { service_->on_process_exit(42); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto read_start = Clock::now();
  EXPECT_EQ(call(77, "GET", "/discover").status, 200);
  EXPECT_LT(seconds_since(read_start), 0.5);
  restoring.get();
  ASSERT_EQ(service_->leases().size(), 1u);
  EXPECT_EQ(service_->leases()[0].gpu, 1);
}

// Two changes of the same GPU never interleave: the second waits for the first's command, then
// sees its lease (another process: 409).
TEST_F(ZeusdLockingTest, ZeusdLocks_ChangesOfOneGpuStaySerialised) {
  auto first = std::async(std::launch::async, [&] {
    return call(42, "POST", set_limit(0, 150000));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const HttpResponse second = call(43, "POST", set_limit(0, 120000));
  EXPECT_EQ(first.get().status, 200);
  EXPECT_EQ(second.status, 409) << second.body;
  service_->on_process_exit(42);
}

}  // namespace
}  // namespace zeus::zeusd
