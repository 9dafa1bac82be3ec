// zeusd for real: the daemon runs in its own (forked) process on a Unix socket in a temp dir, over
// the fake libnvidia-ml.so.1 and a fake powercap tree; clients are other processes using the
// library (discover_devices) — allowed, not allowed (user nobody), killed with SIGKILL.
#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

#include <gtest/gtest.h>

#include "testing/fake_nvml_state.h"
#include "testing/fake_sysfs.h"
#include "zeus/common/clock.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/optimizer/power_limit_optimizer.h"
#include "zeus/zeusd_client/zeusd_client.h"
#include "zeusd/process_watcher.h"
#include "zeusd/zeusd_server.h"
#include "zeusd/zeusd_service.h"

namespace zeus::zeusd {
namespace {

using testing::FakeNvmlDevice;
using testing::FakeNvmlEnvironment;

DiscoverOptions fake_options(const std::string& powercap_root) {
  DiscoverOptions options;
  options.nvml_path = ZEUS_FAKE_NVML_PATH;
  options.rocm_smi_path = "/nonexistent/librocm_smi64.so";
  options.powercap_root = powercap_root;
  return options;
}

// A forked client: runs `body` (which reports one line to the parent) and then waits until the
// parent lets it go (release()) or kills it.
class ClientProcess {
 public:
  explicit ClientProcess(const std::function<std::string()>& body) {
    int report[2], hold[2];
    ZEUS_CHECK(pipe(report) == 0 && pipe(hold) == 0, "pipe");
    pid_ = fork();
    ZEUS_CHECK(pid_ >= 0, "fork");
    if (pid_ == 0) {
      // Keep only this client's pipe ends: a copy of another client's hold pipe would keep that
      // client from seeing its release.
      for (int fd = 3; fd < 1024; ++fd) {
        if (fd != report[1] && fd != hold[0]) close(fd);
      }
      const std::string line = body() + "\n";
      [[maybe_unused]] ssize_t written = write(report[1], line.data(), line.size());
      char byte;
      [[maybe_unused]] ssize_t got = read(hold[0], &byte, 1);  // until released
      _exit(0);
    }
    close(report[1]);
    close(hold[0]);
    report_fd_ = report[0];
    hold_fd_ = hold[1];
  }
  ~ClientProcess() {
    if (hold_fd_ >= 0) close(hold_fd_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(report_fd_);
  }
  // The line the body returned ("ok" or what went wrong).
  std::string report() {
    std::string line;
    char c;
    while (read(report_fd_, &c, 1) == 1 && c != '\n') line += c;
    return line;
  }
  // Lets the process exit normally and reaps it.
  void release() {
    close(hold_fd_);
    hold_fd_ = -1;
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  void sigkill() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int report_fd_ = -1;
  int hold_fd_ = -1;
};

// Runs `body` in a forked child as user `uid` (and group `uid`); its exit code, -1 on a signal.
int run_as(uid_t uid, const std::function<int()>& body) {
  const pid_t pid = fork();
  ZEUS_CHECK(pid >= 0, "fork");
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0) _exit(100);
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class ZeusdEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir_template[] = "/tmp/zeusd_e2e_XXXXXX";
    ZEUS_CHECK(mkdtemp(dir_template) != nullptr, "mkdtemp");
    dir_ = dir_template;
    chmod(dir_.c_str(), 0755);  // user nobody must reach the socket
    socket_path_ = dir_ + "/zeusd.sock";
    tree_.add_package(0, 5'000'000);
    tree_.add_dram(0, 700'000);
    testing::FakePowercapTree::make_unreadable(tree_.package_dir(0) + "/energy_uj");
    int ready[2];
    ZEUS_CHECK(pipe(ready) == 0, "pipe");
    daemon_pid_ = fork();
    ZEUS_CHECK(daemon_pid_ >= 0, "fork");
    if (daemon_pid_ == 0) {
      close(ready[0]);
      _exit(run_daemon(ready[1]));
    }
    close(ready[1]);
    char byte = 0;
    const bool started = read(ready[0], &byte, 1) == 1 && byte == 'R';
    close(ready[0]);
    ZEUS_CHECK(started, "zeusd did not start");
  }

  void TearDown() override {
    kill(daemon_pid_, SIGTERM);
    int status = 0;
    waitpid(daemon_pid_, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "zeusd ended with status " << status;
    std::string command = "rm -rf " + dir_;
    [[maybe_unused]] int rc = std::system(command.c_str());
  }

  // The daemon's process: what tools/zeusd/main.cc does, on the fakes.
  int run_daemon(int ready_fd) {
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, nullptr);
    auto devices = discover(fake_options(tree_.root()));
    if (!devices || devices->gpus.size() != 2 || devices->cpus.size() != 1) return 10;
    AllowList allow;
    if (!allow.add("gpu-read=*") || !allow.add("cpu-read=nobody") ||
        !allow.add("gpu-control=daemon")) {
      return 11;
    }
    PidfdWatcher watcher;
    ZeusdService service(*devices, std::move(allow), watcher);
    if (!watcher.start([&](int pid) { service.on_process_exit(pid); })) return 12;
    ServerOptions options;
    options.socket_path = socket_path_;
    options.socket_mode = 0666;
    auto server = ZeusdServer::start(options, [&](const HttpRequest& request, const Peer& peer) {
      return service.handle(request, peer);
    });
    if (!server) return 13;
    [[maybe_unused]] ssize_t written = write(ready_fd, "R", 1);
    int signal_number = 0;
    sigwait(&term, &signal_number);
    (*server)->stop();
    watcher.stop();  // before the service it calls into goes away
    service.restore_all();
    return 0;
  }

  uint32_t limit_mw(int gpu) const { return fake_.read().devices[gpu].limit_mw; }

  // Waits (up to `limit_s`) until GPU `gpu`'s limit in the fake's state is `want_mw`.
  bool limit_becomes(int gpu, uint32_t want_mw, double limit_s) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
    while (std::chrono::steady_clock::now() < deadline) {
      if (limit_mw(gpu) == want_mw) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return limit_mw(gpu) == want_mw;
  }

  // A body for ClientProcess: discover through zeusd, then set GPU `gpu`'s limit.
  std::function<std::string()> set_limit_body(int gpu, uint32_t limit_mw) const {
    return [this, gpu, limit_mw] {
      auto devices = discover_devices(fake_options(tree_.root()), socket_path_);
      if (!devices) return "discover: " + devices.error().to_string();
      auto set = devices->gpus[gpu]->set_power_limit_mw(limit_mw);
      return set ? std::string("ok") : set.error().to_string();
    };
  }

  // One raw exchange on a fresh connection: what zeusd answers (status line and body), or "".
  std::string raw_exchange(const std::string& bytes) const {
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, socket_path_.c_str(), sizeof(address.sun_path) - 1);
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      close(fd);
      return "";
    }
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;  // zeusd may answer and close before reading everything
      sent += static_cast<size_t>(n);
    }
    shutdown(fd, SHUT_WR);
    std::string answer;
    char buffer[4096];
    ssize_t n;
    while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0)
      answer.append(buffer, static_cast<size_t>(n));
    close(fd);
    return answer;
  }

  FakeNvmlEnvironment fake_{{FakeNvmlDevice::h100(), FakeNvmlDevice::a100()}};
  testing::FakePowercapTree tree_;
  std::string dir_;
  std::string socket_path_;
  pid_t daemon_pid_ = -1;
};

TEST_F(ZeusdEndToEnd, AllowedClientSetsALimitThroughTheLibraryAndExitRestoresIt) {
  ASSERT_EQ(limit_mw(0), 700000u);
  ClientProcess client(set_limit_body(0, 300000));
  ASSERT_EQ(client.report(), "ok");
  EXPECT_EQ(limit_mw(0), 300000u);
  EXPECT_EQ(limit_mw(1), 400000u);
  client.release();  // a normal exit ends the lease too
  EXPECT_TRUE(limit_becomes(0, 700000, 1.0)) << "limit now " << limit_mw(0);
}

TEST_F(ZeusdEndToEnd, SigkilledClientHasItsLimitRestoredWithinOneSecond) {
  ClientProcess client(set_limit_body(1, 150000));
  ASSERT_EQ(client.report(), "ok");
  ASSERT_EQ(limit_mw(1), 150000u);
  client.sigkill();
  EXPECT_TRUE(limit_becomes(1, 400000, 1.0))
      << "limit still " << limit_mw(1) << " mW 1 s after SIGKILL";
}

TEST_F(ZeusdEndToEnd, ClientNotOnTheAllowListGets403) {
  const std::string socket = socket_path_;
  const std::string powercap = tree_.root();
  const int code = testing::run_unprivileged([&] {
    auto devices = discover_devices(fake_options(powercap), socket);
    if (!devices || devices->gpus.size() != 2) return 2;
    auto set = devices->gpus[0]->set_power_limit_mw(300000);
    if (set || set.error().code != ErrorCode::kPermissionDenied) return 3;
    if (set.error().message.find("gpu-control allow-list") == std::string::npos) return 4;
    // cpu-read is allowed for nobody: RAPL is read through zeusd although energy_uj is 000.
    if (devices->cpus.size() != 1) return 5;
    auto energy = devices->cpus[0]->package_energy_uj();
    if (!energy || !devices->cpus[0]->has_dram() || !devices->cpus[0]->dram_energy_uj()) return 6;
    return 0;
  });
  EXPECT_EQ(code, 0);
  EXPECT_EQ(limit_mw(0), 700000u);
}

TEST_F(ZeusdEndToEnd, OutOfRangeLimitGets400) {
  auto devices = discover_devices(fake_options(tree_.root()), socket_path_);
  ASSERT_TRUE(devices.has_value()) << devices.error().to_string();
  auto set = devices->gpus[0]->set_power_limit_mw(50000);
  ASSERT_FALSE(set.has_value());
  EXPECT_EQ(set.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(set.error().message.find("200000-700000 mW"), std::string::npos) << set.error().message;
  EXPECT_NE(set.error().message.find("HTTP 400"), std::string::npos);
  EXPECT_EQ(limit_mw(0), 700000u);
  // Reads stay local and agree with what zeusd sees.
  EXPECT_EQ(*devices->gpus[0]->power_limit_mw(), 700000u);
  EXPECT_EQ(devices->backends.back().backend, "zeusd");
}

TEST_F(ZeusdEndToEnd, UpstreamPerGpuErrorsKeepTheirCodeThroughTheClient) {
  auto state = fake_.read();
  state.devices[1].errors["nvmlDeviceSetGpuLockedClocks"] = 3;  // NVML_ERROR_NOT_SUPPORTED
  fake_.write(state);
  auto devices = discover_devices(fake_options(tree_.root()), socket_path_);
  ASSERT_TRUE(devices.has_value()) << devices.error().to_string();
  auto locked = devices->gpus[1]->lock_sm_clocks_mhz(1005, 1005);
  ASSERT_FALSE(locked.has_value());
  // Upstream's 400 {"errors": {"1": ...}} with zeusd's "codes": not supported, not invalid.
  EXPECT_EQ(locked.error().code, ErrorCode::kNotSupported) << locked.error().message;
  EXPECT_NE(locked.error().message.find("GPU 1"), std::string::npos) << locked.error().message;
  EXPECT_NE(locked.error().message.find("HTTP 400"), std::string::npos);
  // The reset goes through upstream's route and sets the default limit.
  ASSERT_TRUE(devices->gpus[0]->set_power_limit_mw(300000).has_value());
  EXPECT_EQ(limit_mw(0), 300000u);
  ASSERT_TRUE(devices->gpus[0]->reset_power_limit().has_value());
  EXPECT_EQ(limit_mw(0), 700000u);
}

TEST_F(ZeusdEndToEnd, TwoClientsOnDifferentGpusDoNotDisturbEachOther) {
  ClientProcess first(set_limit_body(0, 250000));
  ClientProcess second(set_limit_body(1, 200000));
  ASSERT_EQ(first.report(), "ok");
  ASSERT_EQ(second.report(), "ok");
  EXPECT_EQ(limit_mw(0), 250000u);
  EXPECT_EQ(limit_mw(1), 200000u);
  // A third process may not take GPU 0 from the first while it lives.
  ClientProcess third(set_limit_body(0, 600000));
  EXPECT_NE(third.report().find("leased by pid"), std::string::npos);
  first.sigkill();
  EXPECT_TRUE(limit_becomes(0, 700000, 1.0));
  EXPECT_EQ(limit_mw(1), 200000u);  // the second client's GPU is untouched
  second.release();
  EXPECT_TRUE(limit_becomes(1, 400000, 1.0));
}

// A PowerLimitOptimizer (1 warm-up step, no signal handlers) over an EnergyMonitor of GPU 0 that
// it stores in *monitor (null when the monitor could not be created). candidates: {} = all.
Result<std::unique_ptr<PowerLimitOptimizer>> gpu0_optimizer(
    Devices& devices, Clock& clock, uint32_t profile_steps, std::vector<uint32_t> candidates,
    std::unique_ptr<EnergyMonitor>* monitor) {
  EnergyMonitorOptions monitor_options;
  monitor_options.gpu_indices = std::vector<int>{0};
  auto created = EnergyMonitor::create(devices, clock, monitor_options);
  if (!created) return fail(created.error());
  *monitor = std::move(*created);
  PowerLimitOptimizerOptions options;
  options.warmup_steps = 1;
  options.profile_steps = profile_steps;
  options.candidates = std::move(candidates);
  options.handle_signals = false;
  return PowerLimitOptimizer::create(**monitor, devices, clock, options);
}

TEST_F(ZeusdEndToEnd, PowerLimitOptimizerRunsUnprivilegedThroughZeusd) {
  // User "daemon" (uid 1) is on the gpu-control list and cannot read the fake NVML state itself,
  // so its GPUs are read and changed entirely through zeusd; the optimizer is unchanged.
  const std::string socket = socket_path_;
  const std::string powercap = tree_.root();
  const int code = run_as(1, [&] {
    auto devices = discover_devices(fake_options(powercap), socket);
    if (!devices || devices->gpus.size() != 2) return 2;
    SystemClock clock;
    std::unique_ptr<EnergyMonitor> monitor;
    auto optimizer = gpu0_optimizer(*devices, clock, 2, {700, 500, 300}, &monitor);
    if (!monitor) return 3;
    if (!optimizer) return 4;
    for (int step = 0; step < 50 && (*optimizer)->state() != PowerLimitOptimizer::State::kDone;
         ++step) {
      if (!(*optimizer)->on_step_begin()) return 5;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      if (!(*optimizer)->on_step_end()) return 6;
    }
    if ((*optimizer)->state() != PowerLimitOptimizer::State::kDone) return 7;
    if ((*optimizer)->measurements().size() != 3) return 8;
    auto limit = devices->gpus[0]->power_limit_mw();  // read through zeusd
    if (!limit || *limit != *(*optimizer)->optimal_setting() * 1000) return 9;
    return 0;
  });
  ASSERT_EQ(code, 0);
  std::vector<uint32_t> gpu0_sets;
  for (const auto& call : fake_.read().set_power_limit_log) {
    if (call.index == 0) gpu0_sets.push_back(call.limit_mw);
  }
  EXPECT_NE(std::find(gpu0_sets.begin(), gpu0_sets.end(), 500000u), gpu0_sets.end());
  EXPECT_NE(std::find(gpu0_sets.begin(), gpu0_sets.end(), 300000u), gpu0_sets.end());
  EXPECT_TRUE(limit_becomes(0, 700000, 1.0));  // the optimizer's exit (and the lease) put it back
}

TEST_F(ZeusdEndToEnd, UserRefusedCpuReadByZeusdIsToldToAskForTheAllowEntry) {
  // User "daemon" (uid 1) uses zeusd but is not on its cpu-read list, and cannot read RAPL here.
  const std::string socket = socket_path_;
  const std::string powercap = tree_.root();
  const int code = run_as(1, [&] {
    auto devices = discover_devices(fake_options(powercap), socket);
    if (!devices || !devices->cpus.empty()) return 2;
    for (const auto& backend : devices->backends) {
      if (backend.backend != "rapl") continue;
      // What `zeus measure --cpus` prints as the reason.
      if (backend.detail.find("zeusd serve --allow cpu-read=daemon") == std::string::npos) return 3;
      if (backend.detail.find("run as root or use zeusd") != std::string::npos) return 4;
      return 0;
    }
    return 5;
  });
  EXPECT_EQ(code, 0);
}

TEST_F(ZeusdEndToEnd, OptimizerRefusedByZeusdIsNotToldToLetZeusdDoIt) {
  // User "bin" (uid 2) may read GPUs through zeusd but is not on its gpu-control list.
  const std::string socket = socket_path_;
  const std::string powercap = tree_.root();
  const int code = run_as(2, [&] {
    auto devices = discover_devices(fake_options(powercap), socket);
    if (!devices || devices->gpus.size() != 2) return 2;
    SystemClock clock;
    std::unique_ptr<EnergyMonitor> monitor;
    auto optimizer = gpu0_optimizer(*devices, clock, 1, {}, &monitor);
    if (!monitor) return 3;
    Result<void> failed = ok();
    if (!optimizer) {
      failed = fail(optimizer.error());
    } else {
      for (int step = 0; step < 10 && failed; ++step) {
        failed = (*optimizer)->on_step_begin();
        if (failed) failed = (*optimizer)->on_step_end();
      }
    }
    if (failed || failed.error().code != ErrorCode::kPermissionDenied) return 4;
    const std::string& message = failed.error().message;
    if (message.find("zeusd serve --allow gpu-control=bin") == std::string::npos) return 5;
    if (message.find("let the zeusd daemon do it") != std::string::npos) return 6;
    return 0;
  });
  EXPECT_EQ(code, 0);
  EXPECT_EQ(limit_mw(0), 700000u);
}

TEST_F(ZeusdEndToEnd, BadInputNeverCrashesTheDaemon) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"garbage\r\n\r\n", "HTTP/1.1 400"},
      {std::string("\0\0\0\xff\xfe", 5) + "\r\n\r\n", "HTTP/1.1 400"},
      {"POST /gpu/set_power_limit HTTP/1.1\r\nHost: zeusd\r\nContent-Length: 1000000000\r\n\r\n",
       "HTTP/1.1 413"},
      {"GET /discover HTTP/1.1\r\nHost: zeusd\r\nX: " + std::string(100000, 'a') + "\r\n\r\n", "HTTP/1.1 431"},
      {"GET /gpu/get_power_limit?gpu_ids=999999 HTTP/1.1\r\nHost: zeusd\r\n\r\n", "HTTP/1.1 400"},
      {"GET /gpu/999999/power_limit HTTP/1.1\r\nHost: zeusd\r\n\r\n", "HTTP/1.1 404"},  // removed
      {"GET /gpu/../../etc/passwd HTTP/1.1\r\nHost: zeusd\r\n\r\n", "HTTP/1.1 404"},
      {"POST /gpu/set_power_limit?gpu_ids=0&power_limit_mw=%7B%7B&block=true HTTP/1.1\r\n"
       "Host: zeusd\r\nContent-Length: 0\r\n\r\n",
       "HTTP/1.1 400"},
      {"POST /gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000 HTTP/1.1\r\nHost: zeusd\r\n"
       "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       "HTTP/1.1 400"},  // an empty body, assembled from chunks; no block=
      {"POST /gpu/set_power_limit HTTP/1.1\r\nHost: zeusd\r\nTransfer-Encoding: gzip\r\n\r\n",
       "HTTP/1.1 400"},
      {"GET /discover HTTP/3.0\r\n\r\n", "HTTP/1.1 505"},
  };
  for (const auto& [request, expected] : cases) {
    const std::string answer = raw_exchange(request);
    EXPECT_EQ(answer.rfind(expected, 0), 0u)
        << "request " << request.substr(0, 60) << " -> " << answer;
  }
  // A client that connects and goes away mid-request is harmless too.
  EXPECT_EQ(raw_exchange("POST /gpu/set_power_limit HTTP/1.1\r\nHost: zeusd\r\nContent-Length: 50\r\n"
                         "\r\n{"),
            "");
  EXPECT_EQ(waitpid(daemon_pid_, nullptr, WNOHANG), 0) << "zeusd died";
  EXPECT_EQ(raw_exchange("GET /discover HTTP/1.1\r\nHost: zeusd\r\n\r\n").rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(limit_mw(0), 700000u);
}

TEST_F(ZeusdEndToEnd, WithoutTheDaemonTheErrorNamesTheSocket) {
  auto devices = discover_devices(fake_options(tree_.root()), dir_ + "/missing.sock");
  ASSERT_FALSE(devices.has_value());
  EXPECT_EQ(devices.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(devices.error().message.find("missing.sock"), std::string::npos);
  EXPECT_NE(devices.error().message.find("ZEUSD_SOCK_PATH"), std::string::npos);
}

}  // namespace
}  // namespace zeus::zeusd
