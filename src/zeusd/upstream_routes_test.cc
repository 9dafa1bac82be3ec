// Upstream zeusd's API (Zeus 0.16's daemon client) served by our zeusd: a real ZeusdServer on a
// Unix socket in a temp dir, over the fake libnvidia-ml.so.1 and a fake powercap tree; requests
// go through the project's HttpClient, as the Python client's would through httpx.
#include "zeusd/upstream_routes.h"

#include <sys/stat.h>

#include <chrono>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "http/client.h"
#include "testing/fake_nvml_state.h"
#include "testing/fake_sysfs.h"
#include "zeus/common/clock.h"
#include "zeus/device/replay_gpu.h"
#include "zeus/zeusd_client/zeusd_client.h"
#include "zeusd/process_watcher.h"
#include "zeusd/zeusd_server.h"
#include "zeusd/zeusd_service.h"
#include "zeusd_client/zeusd_devices.h"

namespace zeus::zeusd {
namespace {

using nlohmann::json;
using testing::FakeNvmlDevice;
using testing::FakeNvmlEnvironment;

class UpstreamRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir_template[] = "/tmp/zeusd_upstream_XXXXXX";
    ZEUS_CHECK(mkdtemp(dir_template) != nullptr, "mkdtemp");
    dir_ = dir_template;
    chmod(dir_.c_str(), 0755);
    tree_.add_package(0, 5'000'000);
    tree_.add_dram(0, 700'000);
    DiscoverOptions options;
    options.nvml_path = ZEUS_FAKE_NVML_PATH;
    options.rocm_smi_path = "/nonexistent/librocm_smi64.so";
    options.powercap_root = tree_.root();
    auto devices = discover(options);
    ZEUS_CHECK(devices.has_value() && devices->gpus.size() == 2 && devices->cpus.size() == 1,
               "fake devices");
    devices_ = std::move(*devices);
    AllowList allow;
    ZEUS_CHECK(allow.add("gpu-read=*").has_value(), "allow");
    service_ = std::make_unique<ZeusdService>(devices_, std::move(allow), watcher_, nullptr,
                                              UpstreamOptions{0.02});
    ServerOptions server_options;
    server_options.socket_path = dir_ + "/zeusd.sock";
    server_options.allow_unsafe_socket_dir = true;
    auto server = ZeusdServer::start(server_options, [this](const auto& request, const auto& peer) {
      return service_->handle(request, peer);
    });
    ZEUS_CHECK(server.has_value(), "zeusd server");
    server_ = std::move(*server);
    auto client = http::HttpClient::unix_socket(server_options.socket_path, {});
    ZEUS_CHECK(client.has_value(), "client");
    client_ = std::move(*client);
  }

  void TearDown() override {
    client_.reset();
    server_->stop();
    service_->restore_all();
    const auto state = fake_.read();
    EXPECT_EQ(state.devices[0].limit_mw, 700000u);
    EXPECT_EQ(state.devices[1].limit_mw, 400000u);
    EXPECT_FALSE(state.devices[0].locked_sm_clocks_mhz.has_value());
    EXPECT_FALSE(state.devices[1].locked_memory_clocks_mhz.has_value());
    EXPECT_FALSE(state.devices[0].persistence);
    std::string command = "rm -rf " + dir_;
    [[maybe_unused]] int rc = std::system(command.c_str());
  }

  http::HttpResponse call(const std::string& method, const std::string& target) {
    auto response = client_->request(method, target);
    ZEUS_CHECK(response.has_value(), "request " + target);
    return *response;
  }
  json get_json(const std::string& target, int want_status = 200) {
    http::HttpResponse response = call("GET", target);
    EXPECT_EQ(response.status, want_status) << target << ": " << response.body;
    return json::parse(response.body);
  }

  FakeNvmlEnvironment fake_{{FakeNvmlDevice::h100(), FakeNvmlDevice::a100()}};
  testing::FakePowercapTree tree_;
  std::string dir_;
  Devices devices_;
  NullProcessWatcher watcher_;
  std::unique_ptr<ZeusdService> service_;
  std::unique_ptr<ZeusdServer> server_;
  std::unique_ptr<http::HttpClient> client_;
};

TEST_F(UpstreamRoutesTest, DiscoverCarriesUpstreamsFieldsBesideOurs) {
  json answer = get_json("/discover");
  ASSERT_EQ(answer["gpus"].size(), 2u);
  EXPECT_EQ(answer["gpus"][0]["id"], 0);
  EXPECT_EQ(answer["gpus"][1]["id"], 1);
  EXPECT_EQ(answer["gpus"][1]["name"], "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(answer["gpus"][0]["pci_address"], "0000:01:00.0");
  EXPECT_EQ(answer["gpus"][1]["pci_address"], "0000:02:00.0");
  EXPECT_EQ(answer["gpus"][0]["cumulative_energy_available"], true);
  ASSERT_EQ(answer["cpus"].size(), 1u);
  EXPECT_EQ(answer["cpus"][0]["id"], 0);
  EXPECT_EQ(answer["cpus"][0]["dram_available"], true);
  EXPECT_EQ(answer["enabled_api_groups"], json({"gpu-control", "gpu-read", "cpu-read"}));
  EXPECT_EQ(answer["auth_required"], false);
  EXPECT_EQ(answer["gpus"][0]["uuid"], devices_.gpus[0]->uuid());  // ours stay
}

TEST_F(UpstreamRoutesTest, TimeAndWhoami) {
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  json time = get_json("/time");
  EXPECT_NEAR(time["timestamp_ms"].get<double>(), static_cast<double>(now_ms), 5000.0);
  json whoami = get_json("/auth/whoami", 404);
  EXPECT_EQ(whoami, json({{"error", "Authentication is not enabled on this server."}}));
}

TEST_F(UpstreamRoutesTest, GpuReadsAreKeyedByIndex) {
  EXPECT_EQ(get_json("/gpu/get_power_limit"),
            json::parse(R"({"0":{"power_limit_mw":700000},"1":{"power_limit_mw":400000}})"));
  EXPECT_EQ(get_json("/gpu/get_power_limit?gpu_ids=1"),
            json::parse(R"({"1":{"power_limit_mw":400000}})"));
  EXPECT_EQ(get_json("/gpu/get_power_limit_constraints?gpu_ids=1,%200,1"),
            json::parse(R"({"0":{"min_power_limit_mw":200000,"max_power_limit_mw":700000},
                            "1":{"min_power_limit_mw":100000,"max_power_limit_mw":400000}})"));
  EXPECT_EQ(get_json("/gpu/get_persistence_mode"),
            json::parse(R"({"0":{"enabled":false},"1":{"enabled":false}})"));
  json energy = get_json("/gpu/get_cumulative_energy?gpu_ids=0");
  ASSERT_TRUE(energy["0"]["energy_mj"].is_number_unsigned()) << energy;
  EXPECT_EQ(energy.size(), 1u);
  json power = get_json("/gpu/get_power");
  EXPECT_EQ(power["power_mw"], json::parse(R"({"0":350000,"1":250000})"));
  EXPECT_TRUE(power["timestamp_ms"].is_number_unsigned());
  // Ours, in get_power's shape: the driver's averaged power.
  json average = get_json("/gpu/get_average_power?gpu_ids=1");
  EXPECT_EQ(average["power_mw"], json::parse(R"({"1":250000})")) << average;
  EXPECT_TRUE(average["timestamp_ms"].is_number_unsigned());
}

TEST_F(UpstreamRoutesTest, GetStateSaysWhatIsInForceAndFollowsALockAndALimit) {
  json state = get_json("/gpu/get_state?gpu_ids=0");
  ASSERT_EQ(state.size(), 1u) << state;
  EXPECT_EQ(state["0"]["power_limit_mw"], 700000);
  EXPECT_EQ(state["0"]["power_draw_mw"], 350000);
  EXPECT_TRUE(state["0"]["average_power_mw"].is_number_unsigned()) << state;
  EXPECT_EQ(state["0"]["sm_clock_mhz"], 1980);  // unlocked: the fake boosts to its highest
  ASSERT_EQ(call("POST",
                 "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=900&max_clock_mhz=1500"
                 "&block=true")
                .status,
            200);
  ASSERT_EQ(call("POST", "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000&block=true").status,
            200);
  state = get_json("/gpu/get_state");
  EXPECT_EQ(state["0"]["sm_clock_mhz"], 1500);  // the lock's top is what it runs at
  EXPECT_EQ(state["0"]["power_limit_mw"], 300000);
  EXPECT_EQ(state["1"]["power_limit_mw"], 400000);
  EXPECT_EQ(get_json("/gpu/get_state?gpu_ids=7", 400).contains("error"), true);
}

TEST_F(UpstreamRoutesTest, GpuWritesChangeTheFakeAndTakeLeases) {
  http::HttpResponse set =
      call("POST", "/gpu/set_power_limit?gpu_ids=1&power_limit_mw=300000&block=true");
  EXPECT_EQ(set.status, 200) << set.body;
  EXPECT_EQ(set.body, "");
  EXPECT_EQ(fake_.read().devices[1].limit_mw, 300000u);
  EXPECT_EQ(get_json("/gpu/get_power_limit?gpu_ids=1")["1"]["power_limit_mw"], 300000);
  json leases = get_json("/leases")["leases"];
  ASSERT_EQ(leases.size(), 1u) << leases;
  EXPECT_EQ(leases[0]["gpu"], 1);
  EXPECT_EQ(leases[0]["pid"], getpid());

  EXPECT_EQ(call("POST", "/gpu/set_persistence_mode?gpu_ids=0&enabled=true&block=true").status,
            200);
  EXPECT_TRUE(fake_.read().devices[0].persistence);
  EXPECT_EQ(get_json("/gpu/get_persistence_mode?gpu_ids=0")["0"]["enabled"], true);

  EXPECT_EQ(call("POST",
                 "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=900&max_clock_mhz=1500"
                 "&block=true")
                .status,
            200);
  EXPECT_EQ(fake_.read().devices[0].locked_sm_clocks_mhz,
            (std::pair<uint32_t, uint32_t>{900, 1500}));
  EXPECT_EQ(call("POST",
                 "/gpu/set_mem_locked_clocks?gpu_ids=0,1&min_clock_mhz=1593&max_clock_mhz=1593"
                 "&block=true")
                .status,
            200);
  EXPECT_TRUE(fake_.read().devices[1].locked_memory_clocks_mhz.has_value());
  EXPECT_EQ(call("POST", "/gpu/reset_gpu_locked_clocks?gpu_ids=0&block=true").status, 200);
  EXPECT_FALSE(fake_.read().devices[0].locked_sm_clocks_mhz.has_value());
  EXPECT_TRUE(fake_.read().devices[0].locked_memory_clocks_mhz.has_value());
  EXPECT_EQ(call("POST", "/gpu/reset_mem_locked_clocks?gpu_ids=0&block=true").status, 200);
  EXPECT_FALSE(fake_.read().devices[0].locked_memory_clocks_mhz.has_value());
  EXPECT_EQ(call("POST",
                 "/gpu/set_gpu_locked_clocks?gpu_ids=1&min_clock_mhz=600&max_clock_mhz=600"
                 "&block=false")
                .status,
            200);
  EXPECT_EQ(call("POST", "/gpu/reset_locked_clocks?gpu_ids=1&block=true").status, 200);
  EXPECT_FALSE(fake_.read().devices[1].locked_sm_clocks_mhz.has_value());
  EXPECT_FALSE(fake_.read().devices[1].locked_memory_clocks_mhz.has_value());
  // Ours, in upstream's style: back to the driver's default limit.
  http::HttpResponse reset = call("POST", "/gpu/reset_power_limit?gpu_ids=1&block=true");
  EXPECT_EQ(reset.status, 200) << reset.body;
  EXPECT_EQ(fake_.read().devices[1].limit_mw, 400000u);
  EXPECT_EQ(get_json("/leases")["leases"].size(), 2u);
  // Restored by TearDown's restore_all (the test process is the lease holder).
}

TEST_F(UpstreamRoutesTest, ErrorShapes) {
  json unknown = get_json("/gpu/get_power_limit?gpu_ids=3", 400);
  EXPECT_EQ(unknown, json({{"error", "GPU 3 not found"}}));
  http::HttpResponse write_unknown =
      call("POST", "/gpu/set_power_limit?gpu_ids=0,3&power_limit_mw=300000&block=true");
  EXPECT_EQ(write_unknown.status, 400);
  EXPECT_EQ(json::parse(write_unknown.body), json({{"error", "GPU 3 not found"}}));
  EXPECT_EQ(fake_.read().devices[0].limit_mw, 700000u);  // nothing applied

  json malformed = get_json("/gpu/get_power_limit?gpu_ids=a", 400);
  EXPECT_NE(malformed["error"].get<std::string>().find("Invalid GPU index"), std::string::npos);
  json extra = get_json("/gpu/get_power?gpu_ids=0&verbose=1", 400);
  EXPECT_NE(extra["error"].get<std::string>().find("unknown query parameter"), std::string::npos);
  http::HttpResponse no_block = call("POST", "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=1");
  EXPECT_EQ(no_block.status, 400);
  EXPECT_NE(no_block.body.find("block"), std::string::npos);

  for (const auto& [method, target] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/gpu/get_voltage"},
           {"POST", "/gpu/get_power_limit"},
           {"GET", "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000&block=true"},
           {"GET", "/cpu/get_temperature"},
           {"POST", "/time"}}) {
    http::HttpResponse response = call(method, target);
    EXPECT_EQ(response.status, 404) << method << " " << target;
    EXPECT_EQ(response.body, "") << method << " " << target;
  }
  // Every /auth/ path without a signing key: upstream's message.
  http::HttpResponse login = call("GET", "/auth/login");
  EXPECT_EQ(login.status, 404);
  EXPECT_EQ(login.body, R"({"error":"Authentication is not enabled on this server."})");

  // Out of the device's range: a per-device error, 400.
  http::HttpResponse range =
      call("POST", "/gpu/set_power_limit?gpu_ids=1&power_limit_mw=600000&block=true");
  EXPECT_EQ(range.status, 400);
  json errors = json::parse(range.body);
  ASSERT_TRUE(errors["errors"].contains("1")) << errors;
  EXPECT_NE(errors["errors"]["1"].get<std::string>().find("outside"), std::string::npos);
  EXPECT_EQ(errors["codes"]["1"], "invalid argument");  // our addition beside upstream's errors
}

TEST_F(UpstreamRoutesTest, PerDeviceFailuresAggregateWithTheWorstStatus) {
  auto state = fake_.read();
  state.devices[1].errors["nvmlDeviceSetPowerManagementLimit"] = 4;  // NVML_ERROR_NO_PERMISSION
  fake_.write(state);
  http::HttpResponse response =
      call("POST", "/gpu/set_power_limit?gpu_ids=0,1&power_limit_mw=350000&block=true");
  EXPECT_EQ(response.status, 403) << response.body;
  json body = json::parse(response.body);
  ASSERT_EQ(body["errors"].size(), 1u) << body;
  EXPECT_TRUE(body["errors"]["1"].is_string());
  EXPECT_EQ(body["codes"]["1"], "permission denied");
  EXPECT_EQ(fake_.read().devices[0].limit_mw, 350000u);  // the one that succeeded keeps it
  EXPECT_EQ(fake_.read().devices[1].limit_mw, 400000u);

  // block=false: answered once applied in turn; the device error is only logged.
  http::HttpResponse queued =
      call("POST", "/gpu/set_power_limit?gpu_ids=0,1&power_limit_mw=360000&block=false");
  EXPECT_EQ(queued.status, 200);
  EXPECT_EQ(queued.body, "");
  EXPECT_EQ(fake_.read().devices[0].limit_mw, 360000u);

  // A read failing on one GPU: 500 for an unknown NVML error.
  state = fake_.read();
  state.devices[1].errors.clear();
  state.devices[0].errors["nvmlDeviceGetPowerManagementLimit"] = 999;  // NVML_ERROR_UNKNOWN
  fake_.write(state);
  json failed = get_json("/gpu/get_power_limit", 500);
  EXPECT_TRUE(failed["errors"]["0"].is_string()) << failed;
  EXPECT_FALSE(failed["errors"].contains("1"));
  state.devices[0].errors.clear();
  fake_.write(state);
}

TEST_F(UpstreamRoutesTest, CpuEnergyAndPower) {
  json energy = get_json("/cpu/get_cumulative_energy?cpu=true&dram=true");
  // The raw counters (plus wraparounds), not the energy since zeusd started.
  EXPECT_EQ(energy["0"]["cpu_energy_uj"], 5'000'000) << energy;
  EXPECT_EQ(energy["0"]["dram_energy_uj"], 700'000) << energy;
  tree_.set_package_energy_uj(0, 5'250'000);
  EXPECT_EQ(get_json("/cpu/get_cumulative_energy?cpu=true&dram=false")["0"]["cpu_energy_uj"],
            5'250'000);
  json only_dram = get_json("/cpu/get_cumulative_energy?cpu_ids=0&cpu=false&dram=true");
  EXPECT_TRUE(only_dram["0"]["cpu_energy_uj"].is_null()) << only_dram;
  EXPECT_TRUE(only_dram["0"]["dram_energy_uj"].is_number_unsigned());
  EXPECT_NE(
      get_json("/cpu/get_cumulative_energy?cpu=true", 400)["error"].get<std::string>().find("dram"),
      std::string::npos);
  EXPECT_EQ(get_json("/cpu/get_power?cpu_ids=1", 400), json({{"error", "CPU 1 not found"}}));
  json power = get_json("/cpu/get_power");
  EXPECT_TRUE(power["timestamp_ms"].is_number_unsigned());
  EXPECT_TRUE(power["power_mw"]["0"]["cpu_mw"].is_number_unsigned()) << power;
  EXPECT_TRUE(power["power_mw"]["0"]["dram_mw"].is_number_unsigned()) << power;
}

// Our client (zeusd_client/) on these routes, as it works without a local GPU: its reads (the
// averaged power through get_average_power) and its changes, encoded from GpuCommands.
TEST_F(UpstreamRoutesTest, OurClientReadsAndChangesThroughTheseRoutes) {
  auto client = std::make_shared<ZeusdClient>(dir_ + "/zeusd.sock");
  auto inventory = fetch_inventory(*client);
  ASSERT_TRUE(inventory.has_value()) << inventory.error().message;
  ZeusdGpu gpu(client, inventory->gpus[1], nullptr);
  EXPECT_EQ(gpu.instant_power_mw().value(), 250000u);
  EXPECT_EQ(gpu.average_power_mw().value(), 250000u);
  EXPECT_EQ(gpu.power_limit_mw().value(), 400000u);
  ASSERT_TRUE(gpu.set_power_limit_mw(300000).has_value());
  EXPECT_EQ(fake_.read().devices[1].limit_mw, 300000u);
  ASSERT_TRUE(gpu.set_persistence_mode(true).has_value());
  EXPECT_TRUE(gpu.persistence_mode().value());
  ASSERT_TRUE(gpu.reset_power_limit().has_value());
  EXPECT_EQ(fake_.read().devices[1].limit_mw, 400000u);
  auto refused = gpu.set_power_limit_mw(50000);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message.find("outside"), std::string::npos);
}

// Upstream's writes go through the lease path: another live process's GPU is refused (409 in the
// per-device errors) while the free GPU changes, and each process's exit restores its own GPU.
TEST_F(UpstreamRoutesTest, WritesTakeLeasesRestoredAtExit) {
  Peer first;
  first.pid = 111;
  Peer second;
  second.pid = 222;
  auto post = [&](const Peer& who, const std::string& target) {
    http::HttpRequest request;
    request.method = "POST";
    request.target = target;
    std::string why;
    ZEUS_CHECK(http::decode_target(target, &request, &why), why);
    return service_->handle(request, who);
  };
  EXPECT_EQ(post(first, "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000&block=true").status,
            200);
  http::HttpResponse contested =
      post(second, "/gpu/set_power_limit?gpu_ids=0,1&power_limit_mw=250000&block=true");
  EXPECT_EQ(contested.status, 409) << contested.body;
  json errors = json::parse(contested.body)["errors"];
  ASSERT_EQ(errors.size(), 1u) << errors;
  EXPECT_NE(errors["0"].get<std::string>().find("leased by pid 111"), std::string::npos);
  EXPECT_EQ(fake_.read().devices[0].limit_mw, 300000u);
  EXPECT_EQ(fake_.read().devices[1].limit_mw, 250000u);

  service_->on_process_exit(111);
  EXPECT_EQ(fake_.read().devices[0].limit_mw, 700000u);
  EXPECT_EQ(fake_.read().devices[1].limit_mw, 250000u);
  service_->on_process_exit(222);
  EXPECT_EQ(fake_.read().devices[1].limit_mw, 400000u);
  EXPECT_TRUE(service_->leases().empty());
}

// A GPU without a trustworthy energy counter: /discover says so and its energy read is a 400 of
// that GPU, while the one with a counter is not reported (upstream answers all or the errors).
TEST(UpstreamRoutesEnergy, GpuWithoutACounterIsRefusedPerDevice) {
  FakeClock clock;
  Devices devices;
  for (bool counter : {true, false}) {
    ReplayGpuConfig config;
    config.uuid = std::string("GPU-counter-") + (counter ? "yes" : "no");
    config.has_energy_counter = counter;
    config.power_model = ReplayGpu::capped_power_model(200.0);
    devices.gpus.push_back(std::make_unique<ReplayGpu>(clock, config));
  }
  NullProcessWatcher watcher;
  ZeusdService service(devices, AllowList{}, watcher);
  Peer root;
  root.pid = 1;
  auto get = [&](const std::string& target) {
    http::HttpRequest request;
    request.method = "GET";
    std::string why;
    ZEUS_CHECK(http::decode_target(target, &request, &why), why);
    return service.handle(request, root);
  };
  json discovered = json::parse(get("/discover").body);
  EXPECT_EQ(discovered["gpus"][0]["cumulative_energy_available"], true);
  EXPECT_EQ(discovered["gpus"][1]["cumulative_energy_available"], false);
  EXPECT_TRUE(discovered["gpus"][1]["pci_address"].is_null());  // a replay GPU has none
  http::HttpResponse both = get("/gpu/get_cumulative_energy");
  EXPECT_EQ(both.status, 400);
  json errors = json::parse(both.body)["errors"];
  ASSERT_EQ(errors.size(), 1u) << both.body;
  EXPECT_NE(errors["1"].get<std::string>().find("cumulative_energy_available false"),
            std::string::npos);
  http::HttpResponse first = get("/gpu/get_cumulative_energy?gpu_ids=0");
  EXPECT_EQ(first.status, 200);
  EXPECT_TRUE(json::parse(first.body)["0"]["energy_mj"].is_number_unsigned()) << first.body;
}

TEST(UpstreamRoutesStatus, MapsDeviceErrorsAsUpstreamDoes) {
  EXPECT_EQ(UpstreamRoutes::status_of({500, ErrorCode::kPermissionDenied, ""}), 403);
  EXPECT_EQ(UpstreamRoutes::status_of({400, ErrorCode::kInvalidArgument, ""}), 400);
  EXPECT_EQ(UpstreamRoutes::status_of({501, ErrorCode::kNotSupported, ""}), 400);
  EXPECT_EQ(UpstreamRoutes::status_of({409, ErrorCode::kInvalidArgument, ""}), 409);
  EXPECT_EQ(UpstreamRoutes::status_of({503, ErrorCode::kUnavailable, ""}), 500);
  EXPECT_EQ(UpstreamRoutes::status_of({500, ErrorCode::kInternal, ""}), 500);
}

}  // namespace
}  // namespace zeus::zeusd
