#include "zeusd/zeusd_service.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "device/rapl/rapl_cpu.h"
#include "testing/fake_sysfs.h"
#include "zeus/device/replay_gpu.h"

namespace zeus::zeusd {
namespace {

using nlohmann::json;

// Records which processes took leases; can pretend a process already exited.
class RecordingWatcher final : public ProcessWatcher {
 public:
  Result<void> watch(int pid) override {
    if (exited.count(pid))
      return fail(ErrorCode::kNotFound, "process " + std::to_string(pid) + " has exited");
    watched.insert(pid);
    return ok();
  }
  std::set<int> watched;
  std::set<int> exited;
};

constexpr uint32_t kController = 1000;
constexpr uint32_t kReaderGroup = 2000;
constexpr uint32_t kStrangerUid = 3000;

Peer peer(uint32_t uid, int pid, std::vector<uint32_t> groups = {}) {
  Peer p;
  p.uid = uid;
  p.gid = uid;
  p.pid = pid;
  p.groups = std::move(groups);
  return p;
}

HttpRequest make_request(const std::string& method, const std::string& target) {
  HttpRequest request;
  request.method = method;
  std::string why;
  ZEUS_CHECK(http::decode_target(target, &request, &why), why);
  return request;
}

std::string set_limit(int gpu, uint32_t mw) {
  return "/gpu/set_power_limit?gpu_ids=" + std::to_string(gpu) +
         "&power_limit_mw=" + std::to_string(mw) + "&block=true";
}

// The message of an error answer: upstream's {"error"}, one GPU's {"errors": {"<i>"}}, or ours.
std::string message_of(const HttpResponse& response) {
  const json body = json::parse(response.body);
  if (body.contains("error")) return body["error"];
  if (body.contains("errors")) return body["errors"].begin()->get<std::string>();
  return body.value("message", "");
}

class ZeusdServiceTest : public ::testing::Test {
 protected:
  ZeusdServiceTest() {
    for (int i = 0; i < 2; ++i) {
      ReplayGpuConfig config;
      config.uuid = "GPU-replay-" + std::to_string(i);
      config.physical_index = i;
      config.power_model = ReplayGpu::capped_power_model(250.0);
      auto gpu = std::make_unique<ReplayGpu>(clock_, config);
      gpus_.push_back(gpu.get());
      devices_.gpus.push_back(std::move(gpu));
    }
    tree_.add_package(0, 1000);
    tree_.add_dram(0, 50);
    auto cpus = open_rapl_cpus(tree_.root());
    ZEUS_CHECK(cpus.has_value(), "fake RAPL tree");
    devices_.cpus = std::move(*cpus);
    AllowList allow;
    ZEUS_CHECK(allow.add("gpu-control=" + std::to_string(kController)).has_value(), "allow");
    ZEUS_CHECK(allow.add("gpu-read=@" + std::to_string(kReaderGroup)).has_value(), "allow");
    ZEUS_CHECK(allow.add("cpu-read=*").has_value(), "allow");
    service_ = std::make_unique<ZeusdService>(devices_, std::move(allow), watcher_);
  }

  HttpResponse call(const Peer& who, const std::string& method, const std::string& target) {
    return service_->handle(make_request(method, target), who);
  }
  static json body_of(const HttpResponse& response) { return json::parse(response.body); }
  uint32_t limit_mw(int gpu) { return *gpus_[gpu]->power_limit_mw(); }

  FakeClock clock_;
  testing::FakePowercapTree tree_;
  Devices devices_;
  std::vector<ReplayGpu*> gpus_;
  RecordingWatcher watcher_;
  std::unique_ptr<ZeusdService> service_;
};

TEST_F(ZeusdServiceTest, DiscoverListsDevicesAndTheCallersRights) {
  HttpResponse response = call(peer(kStrangerUid, 10, {kReaderGroup}), "GET", "/discover");
  ASSERT_EQ(response.status, 200) << response.body;
  json answer = body_of(response);
  ASSERT_EQ(answer["gpus"].size(), 2u);
  EXPECT_EQ(answer["gpus"][1]["uuid"], "GPU-replay-1");
  EXPECT_EQ(answer["gpus"][0]["power_limit_range_mw"]["min"], 100000);
  EXPECT_EQ(answer["gpus"][0]["power_limit_range_mw"]["max"], 300000);
  ASSERT_EQ(answer["cpus"].size(), 1u);
  EXPECT_EQ(answer["cpus"][0]["has_dram"], true);
  EXPECT_EQ(answer["caller"]["capabilities"], json({"gpu-read", "cpu-read"}));
  answer = body_of(call(peer(0, 11), "GET", "/discover"));
  EXPECT_EQ(answer["caller"]["capabilities"], json({"gpu-control", "gpu-read", "cpu-read"}));
}

TEST_F(ZeusdServiceTest, AllowedUserSetsLimitAndTakesALease) {
  HttpResponse response = call(peer(kController, 42), "POST", set_limit(1, 150000));
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.body, "");
  EXPECT_EQ(limit_mw(1), 150000u);
  EXPECT_EQ(limit_mw(0), 300000u);
  EXPECT_EQ(watcher_.watched, std::set<int>{42});
  auto leases = service_->leases();
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].gpu, 1);
  EXPECT_EQ(leases[0].pid, 42);
  EXPECT_EQ(leases[0].saved.power_limit_mw, 300000u);
  // A second change by the same process keeps the first saved value.
  ASSERT_EQ(call(peer(kController, 42), "POST", set_limit(1, 120000)).status, 200);
  EXPECT_EQ(service_->leases()[0].saved.power_limit_mw, 300000u);
  service_->on_process_exit(42);
  EXPECT_EQ(limit_mw(1), 300000u);
  EXPECT_TRUE(service_->leases().empty());
}

TEST_F(ZeusdServiceTest, UserNotOnTheAllowListGets403AndNothingChanges) {
  HttpResponse response =
      call(peer(kStrangerUid, 43, {kReaderGroup}), "POST", set_limit(0, 150000));
  EXPECT_EQ(response.status, 403);
  EXPECT_NE(message_of(response).find("gpu-control allow-list"), std::string::npos);
  EXPECT_EQ(limit_mw(0), 300000u);
  EXPECT_TRUE(watcher_.watched.empty());
  // Reads: the group grants gpu-read; without it, 403.
  const std::string read = "/gpu/get_power_limit?gpu_ids=0";
  EXPECT_EQ(call(peer(kStrangerUid, 43, {kReaderGroup}), "GET", read).status, 200);
  EXPECT_EQ(call(peer(kStrangerUid, 43), "GET", read).status, 403);
  HttpResponse leases = call(peer(kStrangerUid, 43), "GET", "/leases");
  EXPECT_EQ(leases.status, 403);
  EXPECT_NE(body_of(leases)["message"].get<std::string>().find("gpu-read"), std::string::npos);
  // Root needs no entry.
  EXPECT_EQ(call(peer(0, 1), "GET", "/gpu/get_cumulative_energy?gpu_ids=0").status, 200);
}

TEST_F(ZeusdServiceTest, ValuesOutsideTheDeviceConstraintsGet400) {
  const Peer controller = peer(kController, 44);
  const std::vector<std::string> cases = {
      set_limit(0, 50000),
      set_limit(0, 300001),
      "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=-1&block=true",
      "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=1.5e5&block=true",
      "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=99999999999&block=true",
      "/gpu/set_power_limit?gpu_ids=0&block=true",
      "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=900&max_clock_mhz=800&block=true",
      "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=100&max_clock_mhz=800&block=true",
      "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=600&block=true",
      "/gpu/set_mem_locked_clocks?gpu_ids=0&min_clock_mhz=1215&max_clock_mhz=5000&block=true",
      "/gpu/set_persistence_mode?gpu_ids=0&enabled=1&block=true",
  };
  for (const auto& target : cases) {
    HttpResponse response = call(controller, "POST", target);
    EXPECT_EQ(response.status, 400) << target << " -> " << response.body;
    EXPECT_FALSE(message_of(response).empty()) << target << " -> " << response.body;
  }
  HttpResponse response = call(controller, "POST", set_limit(0, 50000));
  EXPECT_NE(response.body.find("100000-300000 mW"), std::string::npos) << response.body;
  EXPECT_EQ(gpus_[0]->power_limit_history_mw().size(), 0u);
  EXPECT_TRUE(gpus_[0]->sm_clock_history_mhz().empty());
  EXPECT_TRUE(service_->leases().empty());
}

// The query strings that replaced the JSON bodies: a write takes only its own
// parameters, each once; otherwise 400 naming the parameter, and nothing changes.
TEST_F(ZeusdServiceTest, WritesRefuseUnknownAndRepeatedParameters) {
  const Peer controller = peer(kController, 46);
  struct Case {
    std::string target, mentions;
  };
  const std::vector<Case> cases = {
      {set_limit(0, 150000) + "&x=1",
       "unknown query parameter 'x' (this route takes block, gpu_ids, power_limit_mw)"},
      {set_limit(0, 150000) + "&power_limit_mw=120000",
       "query parameter 'power_limit_mw' is given twice"},
      {"/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=600&max_mz=800&max_clock_mhz=800"
       "&block=true",
       "unknown query parameter 'max_mz'"},
      {"/gpu/set_persistence_mode?gpu_ids=0&enabled=true&enabled=false&block=true",
       "query parameter 'enabled' is given twice"},
      {"/gpu/reset_power_limit?gpu_ids=0&power_limit_mw=150000&block=true",
       "unknown query parameter 'power_limit_mw' (this route takes block, gpu_ids)"},
  };
  for (const auto& c : cases) {
    HttpResponse response = call(controller, "POST", c.target);
    EXPECT_EQ(response.status, 400) << c.target;
    const std::string message = message_of(response);
    EXPECT_NE(message.find(c.mentions), std::string::npos) << c.target << " -> " << message;
  }
  EXPECT_TRUE(gpus_[0]->power_limit_history_mw().empty());
  EXPECT_TRUE(gpus_[0]->sm_clock_history_mhz().empty());
  EXPECT_TRUE(service_->leases().empty());
  EXPECT_EQ(call(controller, "POST", set_limit(0, 150000)).status, 200);
  EXPECT_EQ(call(controller, "POST", "/gpu/reset_power_limit?gpu_ids=0&block=true").status, 200);
  EXPECT_EQ(limit_mw(0), 300000u);
}

TEST_F(ZeusdServiceTest, UnknownRoutesGpusAndMethods) {
  const Peer root = peer(0, 45);
  for (const char* ids : {"2", "abc", "-1", "99999999999"}) {
    HttpResponse response = call(root, "GET", std::string("/gpu/get_power_limit?gpu_ids=") + ids);
    EXPECT_EQ(response.status, 400) << ids;
    EXPECT_TRUE(body_of(response).contains("error")) << response.body;
  }
  EXPECT_EQ(message_of(call(root, "POST", set_limit(5, 150000))), "GPU 5 not found");
  EXPECT_EQ(message_of(call(root, "GET", "/cpu/get_power?cpu_ids=1")), "CPU 1 not found");
  // Upstream's API: an unknown route or method is an empty 404.
  for (const auto& [method, target] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/gpu/get_voltage"},
           {"PUT", set_limit(0, 150000)},
           {"GET", set_limit(0, 150000)},
           {"POST", "/gpu/get_power"}}) {
    HttpResponse response = call(root, method, target);
    EXPECT_EQ(response.status, 404) << method << " " << target;
    EXPECT_EQ(response.body, "") << method << " " << target;
  }
  // Ours: 404 naming where to look, 405 naming the method.
  HttpResponse nowhere = call(root, "GET", "/");
  EXPECT_EQ(nowhere.status, 404);
  EXPECT_NE(message_of(nowhere).find("GET /discover lists the devices"), std::string::npos);
  EXPECT_EQ(call(root, "GET", "/gpu/0/voltage").status, 404);
  EXPECT_EQ(call(root, "GET", "/gpu/0/power_limit/").status, 404);
  HttpResponse post_discover = call(root, "POST", "/discover");
  EXPECT_EQ(post_discover.status, 405);
  EXPECT_EQ(message_of(post_discover), "/discover answers GET only");
  EXPECT_EQ(call(root, "DELETE", "/leases").status, 405);
}

// The routes this release removed answer 404 naming what replaces them, and change nothing.
TEST_F(ZeusdServiceTest, RemovedRoutesNameTheirReplacement) {
  const Peer root = peer(0, 47);
  auto message = [&](const std::string& method, const std::string& path) {
    HttpResponse response = call(root, method, path);
    EXPECT_EQ(response.status, 404) << method << " " << path;
    return message_of(response);
  };
  size_t removed = 0;
  for (const Route& route : service_->routes()) {
    const size_t at = route.pattern.find("{i}");
    if (at == std::string::npos) continue;
    ++removed;
    std::string path = route.pattern;
    path.replace(at, 3, "1");
    const std::string said = message(route.method, path);
    EXPECT_EQ(said.rfind(route.method + " " + path + " was removed", 0), 0u) << said;
    EXPECT_NE(said.find("; use "), std::string::npos) << said;
    EXPECT_NE(said.find("_ids=1"), std::string::npos) << said;  // the index, in the replacement
  }
  EXPECT_EQ(removed, 12u);
  EXPECT_NE(message("POST", "/gpu/0/power_limit")
                .find("use POST /gpu/set_power_limit?gpu_ids=0&power_limit_mw=N&block=true"),
            std::string::npos);
  EXPECT_NE(message("DELETE", "/gpu/0/power_limit")
                .find("use POST /gpu/reset_power_limit?gpu_ids=0&block=true"),
            std::string::npos);
  EXPECT_NE(message("GET", "/gpu/0/power").find("GET /gpu/get_average_power?gpu_ids=0"),
            std::string::npos);
  EXPECT_TRUE(gpus_[0]->power_limit_history_mw().empty());
  EXPECT_TRUE(service_->leases().empty());
}

TEST_F(ZeusdServiceTest, AnotherLiveProcessCannotTakeALeasedGpu) {
  const Peer first = peer(kController, 50);
  const Peer second = peer(kController, 51);
  ASSERT_EQ(call(first, "POST", set_limit(0, 200000)).status, 200);
  HttpResponse response = call(second, "POST", set_limit(0, 150000));
  EXPECT_EQ(response.status, 409);
  EXPECT_NE(response.body.find("pid 50"), std::string::npos);
  EXPECT_EQ(limit_mw(0), 200000u);
  // The other GPU is free, and the two leases are independent.
  ASSERT_EQ(call(second, "POST", set_limit(1, 150000)).status, 200);
  service_->on_process_exit(50);
  EXPECT_EQ(limit_mw(0), 300000u);
  EXPECT_EQ(limit_mw(1), 150000u);
  ASSERT_EQ(call(second, "POST", set_limit(0, 180000)).status, 200);
  service_->on_process_exit(51);
  EXPECT_EQ(limit_mw(0), 300000u);
  EXPECT_EQ(limit_mw(1), 300000u);
}

TEST_F(ZeusdServiceTest, ClocksAndPersistenceAreRestoredAtExit) {
  const Peer controller = peer(kController, 60);
  ASSERT_EQ(call(controller, "POST",
                 "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=600&max_clock_mhz=1200"
                 "&block=true")
                .status,
            200);
  ASSERT_EQ(call(controller, "POST",
                 "/gpu/set_mem_locked_clocks?gpu_ids=0&min_clock_mhz=1215&max_clock_mhz=1215"
                 "&block=true")
                .status,
            200);
  ASSERT_EQ(
      call(controller, "POST", "/gpu/set_persistence_mode?gpu_ids=0&enabled=true&block=true")
          .status,
      200);
  EXPECT_TRUE(*gpus_[0]->persistence_mode());
  service_->on_process_exit(60);
  EXPECT_EQ(gpus_[0]->sm_clock_history_mhz(), (std::vector<ClockLockMhz>{{600, 1200}, {0, 0}}));
  EXPECT_EQ(gpus_[0]->memory_clock_history_mhz(),
            (std::vector<ClockLockMhz>{{1215, 1215}, {0, 0}}));
  EXPECT_FALSE(*gpus_[0]->persistence_mode());
  EXPECT_EQ(gpus_[0]->power_limit_history_mw().size(), 0u);  // the limit was never touched
}

TEST_F(ZeusdServiceTest, ResetAndRestoreAll) {
  ASSERT_EQ(call(peer(kController, 70), "POST", set_limit(0, 200000)).status, 200);
  ASSERT_EQ(call(peer(kController, 70), "POST", "/gpu/reset_power_limit?gpu_ids=0&block=true")
                .status,
            200);
  EXPECT_EQ(limit_mw(0), 300000u);
  ASSERT_EQ(call(peer(kController, 71), "POST", set_limit(1, 120000)).status, 200);
  EXPECT_EQ(service_->leases().size(), 2u);
  service_->restore_all();
  EXPECT_EQ(limit_mw(1), 300000u);
  EXPECT_TRUE(service_->leases().empty());
}

TEST_F(ZeusdServiceTest, ChangesNeedAProcessToTieTheLeaseTo) {
  Peer tcp = peer(kController, -1);
  tcp.unix_socket = false;
  HttpResponse response = call(tcp, "POST", set_limit(0, 200000));
  EXPECT_EQ(response.status, 403);
  EXPECT_NE(response.body.find("Unix socket"), std::string::npos);
  // uid 1000 lacks gpu-read.
  EXPECT_EQ(call(tcp, "GET", "/gpu/get_power_limit?gpu_ids=0").status, 403);
  watcher_.exited.insert(80);
  EXPECT_EQ(call(peer(kController, 80), "POST", set_limit(0, 200000)).status, 400);
  EXPECT_EQ(limit_mw(0), 300000u);
  EXPECT_TRUE(service_->leases().empty());
}

TEST_F(ZeusdServiceTest, TcpPeerRefusedGpuControlIsToldTcpIsReadOnlyNotToGetAllowed) {
  // uid 3000 is on no allow-list; over TCP no --allow entry could ever grant a change.
  Peer tcp = peer(kStrangerUid, -1, {kReaderGroup});
  tcp.unix_socket = false;
  for (const std::string& target :
       {set_limit(0, 200000), std::string("/gpu/reset_power_limit?gpu_ids=0&block=true")}) {
    HttpResponse response = call(tcp, "POST", target);
    EXPECT_EQ(response.status, 403);
    const std::string message = message_of(response);
    EXPECT_NE(message.find("TCP port is read-only"), std::string::npos) << message;
    EXPECT_NE(message.find("Unix socket"), std::string::npos) << message;
    EXPECT_EQ(message.find("--allow"), std::string::npos) << message;
  }
  EXPECT_EQ(limit_mw(0), 300000u);
}

TEST_F(ZeusdServiceTest, DeviceErrorsMapToStatuses) {
  gpus_[0]->set_deny_control(true);
  // The driver's "no permission" is upstream's 403; the message says zeusd lacks the privilege.
  HttpResponse response = call(peer(kController, 90), "POST", set_limit(0, 200000));
  EXPECT_EQ(response.status, 403);
  EXPECT_NE(response.body.find("run it as root"), std::string::npos);
  EXPECT_TRUE(service_->leases().empty());  // a failed first change leaves no lease
  gpus_[1]->set_read_error(Error{ErrorCode::kUnavailable, "GPU is lost"});
  HttpResponse lost = call(peer(0, 91), "GET", "/gpu/get_power?gpu_ids=1");
  EXPECT_EQ(lost.status, 500);
  EXPECT_EQ(body_of(lost)["codes"]["1"], "unavailable");
}

TEST_F(ZeusdServiceTest, ReadsMatchTheDevices) {
  const Peer reader = peer(kStrangerUid, 100, {kReaderGroup});
  clock_.advance_s(2.0);
  json energy = body_of(call(reader, "GET", "/gpu/get_cumulative_energy?gpu_ids=0"));
  EXPECT_EQ(energy["0"]["energy_mj"], 500000);  // 250 W x 2 s
  json power = body_of(call(reader, "GET", "/gpu/get_power?gpu_ids=0"));
  EXPECT_EQ(power["power_mw"]["0"], 250000);
  json average = body_of(call(reader, "GET", "/gpu/get_average_power"));
  EXPECT_EQ(average["power_mw"], json::parse(R"({"0": 250000, "1": 250000})")) << average;
  EXPECT_TRUE(average["timestamp_ms"].is_number_unsigned()) << average;
  EXPECT_EQ(body_of(call(reader, "GET", "/gpu/get_persistence_mode?gpu_ids=0"))["0"]["enabled"],
            false);
  tree_.set_package_energy_uj(0, 4000);
  json cpu = body_of(call(reader, "GET", "/cpu/get_cumulative_energy?cpu=true&dram=true"));
  EXPECT_EQ(cpu["0"]["cpu_energy_uj"], 4000);  // the raw counter (plus its wraparounds)
  EXPECT_EQ(cpu["0"]["dram_energy_uj"], 50);
}

// Every route's capability in the table is the API group the request gate gives its path (the
// gate decides before the table is consulted, so the two must agree).
TEST_F(ZeusdServiceTest, TheTablesCapabilitiesAgreeWithTheGate) {
  for (const Route& route : service_->routes()) {
    if (route.pattern.find("{i}") != std::string::npos) {
      EXPECT_FALSE(route.capability) << route.pattern;  // a removed route: 404 for anyone
      continue;
    }
    EXPECT_EQ(route.capability, required_group(route.pattern)) << route.method << " "
                                                               << route.pattern;
  }
}

TEST(AllowList, ParsesNamesIdsGroupsAndAnyone) {
  AllowList allow;
  ASSERT_TRUE(allow.add("gpu-control=nobody,@root,1234").has_value());
  ASSERT_TRUE(allow.add("gpu-read=*").has_value());
  Peer nobody = peer(65534, 1);
  EXPECT_TRUE(allow.allows(Capability::kGpuControl, nobody));
  EXPECT_TRUE(allow.allows(Capability::kGpuControl, peer(1234, 1)));
  EXPECT_FALSE(allow.allows(Capability::kGpuControl, peer(4321, 1)));
  EXPECT_TRUE(allow.allows(Capability::kGpuControl, peer(4321, 1, {0})));  // member of group root
  EXPECT_TRUE(allow.allows(Capability::kGpuRead, peer(4321, 1)));
  EXPECT_FALSE(allow.allows(Capability::kCpuRead, peer(4321, 1)));
  EXPECT_TRUE(allow.allows(Capability::kCpuRead, peer(0, 1)));
  EXPECT_EQ(allow.describe(Capability::kGpuControl), "root, nobody, @root, 1234");
  EXPECT_EQ(allow.describe(Capability::kCpuRead), "root only");
}

TEST(AllowList, RejectsMalformedSpecsAndUnknownNames) {
  AllowList allow;
  EXPECT_EQ(allow.add("gpu-control").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(allow.add("gpu-write=alice").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(allow.add("gpu-read=root,,nobody").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(allow.add("gpu-read=no-such-user-zeusd").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(allow.add("gpu-read=@no-such-group-zeusd").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(parse_capability("cpu-read").value(), Capability::kCpuRead);
}

}  // namespace
}  // namespace zeus::zeusd
