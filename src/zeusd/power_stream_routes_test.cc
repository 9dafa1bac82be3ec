// zeusd's power streams over real HTTP on a Unix socket: the fake libnvidia-ml.so.1 (its state
// file rewritten to change the power) and a fake RAPL tree whose counters grow at a known rate.
#include "zeusd/power_stream_routes.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "device/nvml/nvml_gpu.h"
#include "device/rapl/rapl_cpu.h"
#include "http/client.h"
#include "testing/fake_nvml_state.h"
#include "testing/fake_sysfs.h"
#include "zeusd/process_watcher.h"
#include "zeusd/zeusd_server.h"
#include "zeusd/zeusd_service.h"

namespace zeus::zeusd {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
namespace fs = std::filesystem;

class NoWatcher final : public ProcessWatcher {
 public:
  Result<void> watch(int) override { return ok(); }
};

testing::FakeNvmlState two_gpus(uint32_t gpu0_mw, uint32_t gpu1_mw) {
  testing::FakeNvmlState state;
  state.devices = {testing::FakeNvmlDevice::h100(), testing::FakeNvmlDevice::a100()};
  state.devices[0].power_draw_mw = gpu0_mw;
  state.devices[1].power_draw_mw = gpu1_mw;
  return state;
}

// Reads one stream in a thread, keeping every event's JSON.
class Listener {
 public:
  Listener(const std::string& socket, const std::string& target) {
    thread_ = std::thread([this, socket, target] {
      auto client = http::HttpClient::unix_socket(socket, {});
      if (!client) return;
      std::string buffer;
      auto head = (*client)->stream(
          "GET", target, "", {},
          [this](const http::HttpResponse& h) {
            std::lock_guard<std::mutex> lock(mu_);
            head_ = h;
            return true;
          },
          [&](std::string_view piece) {
            buffer.append(piece);
            for (size_t end; (end = buffer.find("\n\n")) != std::string::npos;) {
              const std::string event = buffer.substr(0, end);
              buffer.erase(0, end + 2);
              if (event.rfind("data: ", 0) == 0) {
                std::lock_guard<std::mutex> lock(mu_);
                events_.push_back(json::parse(event.substr(6)));
              }
            }
            return !stop_.load();
          },
          30);
      std::lock_guard<std::mutex> lock(mu_);
      if (head) body_ = head->body;
      done_ = true;
    });
  }
  ~Listener() {
    stop_ = true;
    thread_.join();
  }
  std::vector<json> events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  http::HttpResponse head() {
    std::lock_guard<std::mutex> lock(mu_);
    return head_;
  }
  void stop() { stop_ = true; }

 private:
  std::thread thread_;
  std::mutex mu_;
  std::vector<json> events_;
  http::HttpResponse head_;
  std::string body_;
  bool done_ = false;
  std::atomic<bool> stop_{false};
};

template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = 3000ms) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!pred() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(5ms);
  return pred();
}

class PowerStreamRoutesTest : public ::testing::Test {
 protected:
  PowerStreamRoutesTest() : fake_(two_gpus(350000, 250000)) {
    auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
    ZEUS_CHECK(gpus.has_value(), "fake NVML");
    devices_.gpus = std::move(*gpus);
    tree_.add_package(0, 0);
    tree_.add_dram(0, 0);
    auto cpus = open_rapl_cpus(tree_.root());
    ZEUS_CHECK(cpus.has_value(), "fake RAPL tree");
    devices_.cpus = std::move(*cpus);
    AllowList allow;
    ZEUS_CHECK(allow.add("gpu-read=*").has_value() && allow.add("cpu-read=*").has_value(), "allow");
    service_ = std::make_unique<ZeusdService>(devices_, std::move(allow), watcher_);
    char dir_template[] = "/tmp/zeusd_stream_XXXXXX";
    ZEUS_CHECK(mkdtemp(dir_template) != nullptr, "mkdtemp");
    dir_ = dir_template;
    ServerOptions options;
    options.socket_path = (dir_ / "zeusd.sock").string();
    auto server = ZeusdServer::start(
        options, [this](const HttpRequest& r, const Peer& p) { return service_->handle(r, p); },
        [this](const HttpRequest& r, const Peer& p, const std::shared_ptr<http::Reply>& reply) {
          return service_->stream(r, p, reply);
        });
    ZEUS_CHECK(server.has_value(), "zeusd server");
    server_ = std::move(*server);
  }
  ~PowerStreamRoutesTest() override {
    server_->stop();
    fs::remove_all(dir_);
  }
  std::string socket() const { return (dir_ / "zeusd.sock").string(); }
  Result<http::HttpResponse> get(const std::string& target) {
    auto client = http::HttpClient::unix_socket(socket(), {});
    if (!client) return fail(client.error());
    return (*client)->request("GET", target);
  }

  testing::FakeNvmlEnvironment fake_;
  testing::FakePowercapTree tree_;
  Devices devices_;
  NoWatcher watcher_;
  std::unique_ptr<ZeusdService> service_;
  fs::path dir_;
  std::unique_ptr<ZeusdServer> server_;
};

TEST_F(PowerStreamRoutesTest, GpuStreamSendsThePowerNowThenEachChangeOfItsGpus) {
  Listener listener(socket(), "/gpu/stream_power?gpu_ids=1");
  ASSERT_TRUE(eventually([&] { return listener.events().size() == 1; }));
  EXPECT_EQ(listener.head().content_type, "text/event-stream");
  bool no_cache = false;
  for (const auto& [name, value] : listener.head().headers) {
    if (name == "cache-control" || name == "Cache-Control") no_cache = value == "no-cache";
  }
  EXPECT_TRUE(no_cache);
  json first = listener.events()[0];
  EXPECT_EQ(first["gpu_id"], 1);
  EXPECT_EQ(first["power_mw"], 250000);
  EXPECT_NEAR(first["timestamp_ms"].get<double>(),
              std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count(),
              5000);
  fake_.write(two_gpus(360000, 250000));  // GPU 0 only: not this listener's
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(listener.events().size(), 1u);
  fake_.write(two_gpus(360000, 275000));
  ASSERT_TRUE(eventually([&] { return listener.events().size() == 2; }));
  EXPECT_EQ(listener.events()[1]["power_mw"], 275000);
  EXPECT_TRUE(service_->power_streams().gpu_fanout().polling());
  listener.stop();
  // The listener hung up: the poller pauses even though nothing changes.
  EXPECT_TRUE(eventually([&] { return !service_->power_streams().gpu_fanout().polling(); }));
}

TEST_F(PowerStreamRoutesTest, CpuStreamReportsPowerFromRaplDeltas) {
  // The counters grow at 80 W (package) and 8 W (DRAM), updated every 2 ms, each file replaced
  // whole (a read of real sysfs never sees half a number; one of a file being rewritten could).
  std::atomic<bool> stop{false};
  auto put = [](const std::string& dir, uint64_t uj) {
    const std::string tmp = dir + "/energy_uj.tmp";
    { std::ofstream(tmp) << uj << "\n"; }
    fs::rename(tmp, dir + "/energy_uj");
  };
  std::thread writer([&] {
    const auto start = std::chrono::steady_clock::now();
    while (!stop) {
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      put(tree_.package_dir(0), static_cast<uint64_t>(s * 80e6));
      put(tree_.subzone_dir(0, 0), static_cast<uint64_t>(s * 8e6));
      std::this_thread::sleep_for(2ms);
    }
  });
  Listener listener(socket(), "/cpu/stream_power");
  const bool got = eventually([&] { return listener.events().size() >= 5; });
  stop = true;
  writer.join();
  ASSERT_TRUE(got) << listener.events().size() << " events: "
                   << (listener.events().empty() ? "" : listener.events().back().dump());
  // Each event is the energy delta over the measured time between two polls; the writer's own
  // lag on a loaded machine moves single readings, so each is checked loosely and their mean
  // closely.
  double cpu_sum = 0, dram_sum = 0;
  const auto events = listener.events();
  for (const json& event : events) {
    EXPECT_EQ(event["cpu_id"], 0);
    EXPECT_NEAR(event["cpu_mw"].get<double>(), 80000, 80000 * 0.4) << event;
    EXPECT_NEAR(event["dram_mw"].get<double>(), 8000, 8000 * 0.4) << event;
    cpu_sum += event["cpu_mw"].get<double>();
    dram_sum += event["dram_mw"].get<double>();
  }
  EXPECT_NEAR(cpu_sum / static_cast<double>(events.size()), 80000, 80000 * 0.1);
  EXPECT_NEAR(dram_sum / static_cast<double>(events.size()), 8000, 8000 * 0.1);
}

TEST_F(PowerStreamRoutesTest, BadIdsAnswer400AndOtherMethods404) {
  auto unknown = get("/gpu/stream_power?gpu_ids=0,7");
  ASSERT_TRUE(unknown.has_value());
  EXPECT_EQ(unknown->status, 400);
  EXPECT_EQ(json::parse(unknown->body)["error"], "GPU 7 not found");
  auto malformed = get("/cpu/stream_power?cpu_ids=x");
  ASSERT_TRUE(malformed.has_value());
  EXPECT_EQ(malformed->status, 400);
  auto unknown_param = get("/gpu/stream_power?gpu=0");
  ASSERT_TRUE(unknown_param.has_value());
  EXPECT_EQ(unknown_param->status, 400);
  auto client = http::HttpClient::unix_socket(socket(), {});
  ASSERT_TRUE(client.has_value());
  auto post = (*client)->request("POST", "/gpu/stream_power");
  ASSERT_TRUE(post.has_value());
  EXPECT_EQ(post->status, 404);
  EXPECT_FALSE(service_->power_streams().gpu_fanout().polling());
}

// A Reply that keeps the answer (the allow-list's refusal never starts a stream).
class RecordingReply final : public http::Reply {
 public:
  bool send(http::HttpResponse response) override {
    answer = std::move(response);
    return true;
  }
  void answer_by(double, http::HttpResponse) override {}
  std::shared_ptr<http::EventStream> start_events() override {
    started = true;
    return nullptr;
  }
  std::shared_ptr<http::BodyStream> start_body(http::StreamHead) override { return nullptr; }
  bool answered() const override { return answer.has_value(); }
  bool client_gone() const override { return false; }
  std::optional<http::HttpResponse> answer;
  bool started = false;
};

TEST_F(PowerStreamRoutesTest, ACallerOffTheAllowListGets403AndNoStream) {
  AllowList allow;
  ASSERT_TRUE(allow.add("gpu-read=1000").has_value());
  std::mutex mutex;
  PowerStreamRoutes routes(devices_, allow, mutex, UpstreamOptions{});
  Peer stranger;
  stranger.uid = 3000;
  stranger.gid = 3000;
  stranger.groups = {3000};
  for (const char* path : {"/gpu/stream_power", "/cpu/stream_power"}) {
    http::HttpRequest request;
    request.method = "GET";
    request.path = request.target = path;
    auto reply = std::make_shared<RecordingReply>();
    routes.handle(request, stranger, reply);
    ASSERT_TRUE(reply->answer.has_value()) << path;
    EXPECT_EQ(reply->answer->status, 403) << path;
    EXPECT_NE(json::parse(reply->answer->body)["error"].get<std::string>().find("allow-list"),
              std::string::npos)
        << reply->answer->body;
    EXPECT_FALSE(reply->started);
  }
  EXPECT_EQ(routes.gpu_fanout().listeners(), 0u);
}

}  // namespace
}  // namespace zeus::zeusd
