#include "zeusd/zeusd_service.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "device/rapl/rapl_cpu.h"
#include "testing/fake_sysfs.h"
#include "zeus/replay_gpu.h"

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

HttpRequest make_request(const std::string& method, const std::string& path,
                         const std::string& body = "") {
  HttpRequest request;
  request.method = method;
  request.target = path;
  request.path = path;
  request.body = body;
  return request;
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

  HttpResponse call(const Peer& who, const std::string& method, const std::string& path,
                    const std::string& body = "") {
    return service_->handle(make_request(method, path, body), who);
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
  HttpResponse response =
      call(peer(kController, 42), "POST", "/gpu/1/power_limit", R"({"power_limit_mw": 150000})");
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(body_of(response)["power_limit_mw"], 150000);
  EXPECT_EQ(limit_mw(1), 150000u);
  EXPECT_EQ(limit_mw(0), 300000u);
  EXPECT_EQ(watcher_.watched, std::set<int>{42});
  auto leases = service_->leases();
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].gpu, 1);
  EXPECT_EQ(leases[0].pid, 42);
  EXPECT_EQ(leases[0].saved.power_limit_mw, 300000u);
  // A second change by the same process keeps the first saved value.
  ASSERT_EQ(
      call(peer(kController, 42), "POST", "/gpu/1/power_limit", R"({"power_limit_mw": 120000})")
          .status,
      200);
  EXPECT_EQ(service_->leases()[0].saved.power_limit_mw, 300000u);
  service_->on_process_exit(42);
  EXPECT_EQ(limit_mw(1), 300000u);
  EXPECT_TRUE(service_->leases().empty());
}

TEST_F(ZeusdServiceTest, UserNotOnTheAllowListGets403AndNothingChanges) {
  HttpResponse response = call(peer(kStrangerUid, 43, {kReaderGroup}), "POST", "/gpu/0/power_limit",
                               R"({"power_limit_mw": 150000})");
  EXPECT_EQ(response.status, 403);
  EXPECT_NE(body_of(response)["message"].get<std::string>().find("gpu-control allow-list"),
            std::string::npos);
  EXPECT_EQ(limit_mw(0), 300000u);
  EXPECT_TRUE(watcher_.watched.empty());
  // Reads: the group grants gpu-read; without it, 403.
  EXPECT_EQ(call(peer(kStrangerUid, 43, {kReaderGroup}), "GET", "/gpu/0/power_limit").status, 200);
  EXPECT_EQ(call(peer(kStrangerUid, 43), "GET", "/gpu/0/power_limit").status, 403);
  EXPECT_EQ(call(peer(kStrangerUid, 43), "GET", "/leases").status, 403);
  // Root needs no entry.
  EXPECT_EQ(call(peer(0, 1), "GET", "/gpu/0/energy").status, 200);
}

TEST_F(ZeusdServiceTest, ValuesOutsideTheDeviceConstraintsGet400) {
  const Peer controller = peer(kController, 44);
  struct Case {
    std::string path, body;
  };
  const std::vector<Case> cases = {
      {"/gpu/0/power_limit", R"({"power_limit_mw": 50000})"},
      {"/gpu/0/power_limit", R"({"power_limit_mw": 300001})"},
      {"/gpu/0/power_limit", R"({"power_limit_mw": -1})"},
      {"/gpu/0/power_limit", R"({"power_limit_mw": 1.5e5})"},
      {"/gpu/0/power_limit", R"({"power_limit_mw": "150000"})"},
      {"/gpu/0/power_limit", R"({"power_limit_mw": 99999999999})"},
      {"/gpu/0/power_limit", R"([150000])"},
      {"/gpu/0/power_limit", R"({"power_limit_mw": 150000)"},
      {"/gpu/0/power_limit", ""},
      {"/gpu/0/sm_clocks", R"({"min_mhz": 900, "max_mhz": 800})"},
      {"/gpu/0/sm_clocks", R"({"min_mhz": 100, "max_mhz": 800})"},
      {"/gpu/0/sm_clocks", R"({"min_mhz": 600})"},
      {"/gpu/0/memory_clocks", R"({"min_mhz": 1215, "max_mhz": 5000})"},
      {"/gpu/0/persistence_mode", R"({"enabled": 1})"},
  };
  for (const auto& c : cases) {
    HttpResponse response = call(controller, "POST", c.path, c.body);
    EXPECT_EQ(response.status, 400) << c.path << " " << c.body << " -> " << response.body;
    EXPECT_TRUE(body_of(response).contains("message"));
  }
  HttpResponse response =
      call(controller, "POST", "/gpu/0/power_limit", R"({"power_limit_mw": 50000})");
  EXPECT_NE(response.body.find("100000-300000 mW"), std::string::npos) << response.body;
  EXPECT_EQ(gpus_[0]->power_limit_history_mw().size(), 0u);
  EXPECT_TRUE(gpus_[0]->sm_clock_history_mhz().empty());
  EXPECT_TRUE(service_->leases().empty());
}

// Probe item B3: every JSON body zeusd reads (each POST knob, and a DELETE that sends one) takes
// only its own fields, each once; otherwise 400 naming the field, and nothing changes.
TEST_F(ZeusdServiceTest, B3_BodiesRefuseUnknownFieldsAndDuplicateKeys) {
  const Peer controller = peer(kController, 46);
  struct Case {
    std::string method, path, body, mentions;
  };
  const std::vector<Case> cases = {
      {"POST", "/gpu/0/power_limit", R"({"power_limit_mw": 150000, "x": 1})",
       "POST /gpu/0/power_limit: unknown field 'x'; the fields are: power_limit_mw, e.g. "
       R"({"power_limit_mw": 300000})"},
      {"POST", "/gpu/0/power_limit", R"({"power_limit_mw": 150000, "power_limit_mw": 120000})",
       "duplicate field 'power_limit_mw'"},
      {"POST", "/gpu/0/power_limit", R"({"power_limit_mw": 150000, "x": {"a": 1, "a": 2}})",
       "duplicate field 'a'"},
      {"POST", "/gpu/0/sm_clocks", R"({"min_mhz": 600, "max_mz": 800, "max_mhz": 800})",
       "unknown field 'max_mz'; the fields are: min_mhz, max_mhz"},
      {"POST", "/gpu/0/sm_clocks", R"({"min_mhz": 600, "max_mhz": 800, "min_mhz": 700})",
       "duplicate field 'min_mhz'"},
      {"POST", "/gpu/0/memory_clocks", R"({"min_mhz": 1215, "max_mhz": 1215, "lock": true})",
       "unknown field 'lock'"},
      {"POST", "/gpu/0/memory_clocks", R"({"min_mhz": 1215, "max_mhz": 1215, "max_mhz": 1})",
       "duplicate field 'max_mhz'"},
      {"POST", "/gpu/0/persistence_mode", R"({"enabled": true, "enable": false})",
       "unknown field 'enable'; the fields are: enabled"},
      {"POST", "/gpu/0/persistence_mode", R"({"enabled": true, "enabled": false})",
       "duplicate field 'enabled'"},
      {"DELETE", "/gpu/0/power_limit", R"({"power_limit_mw": 150000})",
       "DELETE /gpu/0/power_limit: unknown field 'power_limit_mw'; the fields are: none (send no "
       "body)"},
      {"DELETE", "/gpu/0/sm_clocks", R"({"x": 1})", "unknown field 'x'"},
      {"DELETE", "/gpu/0/memory_clocks", "not json", "the body is not valid JSON"},
      {"POST", "/gpu/0/power_limit",
       std::string(R"({"power_limit_mw": 1, ")") + std::string(300, 'k') + R"(": 1})",
       "unknown field; the fields are"},
  };
  for (const auto& c : cases) {
    HttpResponse response = call(controller, c.method, c.path, c.body);
    EXPECT_EQ(response.status, 400) << c.method << " " << c.path << " " << c.body;
    const std::string message = body_of(response)["message"].get<std::string>();
    EXPECT_NE(message.find(c.mentions), std::string::npos) << c.body << " -> " << message;
  }
  EXPECT_TRUE(gpus_[0]->power_limit_history_mw().empty());
  EXPECT_TRUE(gpus_[0]->sm_clock_history_mhz().empty());
  EXPECT_TRUE(service_->leases().empty());
  // The bodies zeusd's clients send still work: the fields, once; a reset with no body or {}.
  EXPECT_EQ(call(controller, "POST", "/gpu/0/power_limit", R"({"power_limit_mw": 150000})").status,
            200);
  EXPECT_EQ(call(controller, "DELETE", "/gpu/0/power_limit", "{}").status, 200);
  EXPECT_EQ(call(controller, "DELETE", "/gpu/0/power_limit").status, 200);
  EXPECT_EQ(limit_mw(0), 300000u);
}

TEST_F(ZeusdServiceTest, UnknownRoutesGpusAndMethods) {
  const Peer root = peer(0, 45);
  EXPECT_EQ(call(root, "GET", "/gpu/2/power_limit").status, 404);
  EXPECT_EQ(call(root, "GET", "/gpu/abc/power_limit").status, 404);
  EXPECT_EQ(call(root, "GET", "/gpu/-1/power_limit").status, 404);
  EXPECT_EQ(call(root, "GET", "/gpu/99999999999/power_limit").status, 404);
  EXPECT_EQ(call(root, "POST", "/gpu/5/power_limit", R"({"power_limit_mw": 150000})").status, 404);
  EXPECT_EQ(call(root, "GET", "/gpu/0/voltage").status, 404);
  EXPECT_EQ(call(root, "GET", "/cpu/1/energy").status, 404);
  EXPECT_EQ(call(root, "GET", "/").status, 404);
  EXPECT_EQ(call(root, "GET", "/gpu/0/power_limit/").status, 404);
  EXPECT_EQ(call(root, "PUT", "/gpu/0/power_limit").status, 405);
  EXPECT_EQ(call(root, "GET", "/gpu/0/sm_clocks").status, 405);
  EXPECT_EQ(call(root, "POST", "/discover").status, 405);
  EXPECT_EQ(call(root, "POST", "/cpu/0/energy").status, 405);
}

TEST_F(ZeusdServiceTest, AnotherLiveProcessCannotTakeALeasedGpu) {
  const Peer first = peer(kController, 50);
  const Peer second = peer(kController, 51);
  ASSERT_EQ(call(first, "POST", "/gpu/0/power_limit", R"({"power_limit_mw": 200000})").status, 200);
  HttpResponse response =
      call(second, "POST", "/gpu/0/power_limit", R"({"power_limit_mw": 150000})");
  EXPECT_EQ(response.status, 409);
  EXPECT_NE(response.body.find("pid 50"), std::string::npos);
  EXPECT_EQ(limit_mw(0), 200000u);
  // The other GPU is free, and the two leases are independent.
  ASSERT_EQ(call(second, "POST", "/gpu/1/power_limit", R"({"power_limit_mw": 150000})").status,
            200);
  service_->on_process_exit(50);
  EXPECT_EQ(limit_mw(0), 300000u);
  EXPECT_EQ(limit_mw(1), 150000u);
  ASSERT_EQ(call(second, "POST", "/gpu/0/power_limit", R"({"power_limit_mw": 180000})").status,
            200);
  service_->on_process_exit(51);
  EXPECT_EQ(limit_mw(0), 300000u);
  EXPECT_EQ(limit_mw(1), 300000u);
}

TEST_F(ZeusdServiceTest, ClocksAndPersistenceAreRestoredAtExit) {
  const Peer controller = peer(kController, 60);
  ASSERT_EQ(
      call(controller, "POST", "/gpu/0/sm_clocks", R"({"min_mhz": 600, "max_mhz": 1200})").status,
      200);
  ASSERT_EQ(
      call(controller, "POST", "/gpu/0/memory_clocks", R"({"min_mhz": 1215, "max_mhz": 1215})")
          .status,
      200);
  ASSERT_EQ(call(controller, "POST", "/gpu/0/persistence_mode", R"({"enabled": true})").status,
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
  ASSERT_EQ(
      call(peer(kController, 70), "POST", "/gpu/0/power_limit", R"({"power_limit_mw": 200000})")
          .status,
      200);
  ASSERT_EQ(call(peer(kController, 70), "DELETE", "/gpu/0/power_limit").status, 200);
  EXPECT_EQ(limit_mw(0), 300000u);
  ASSERT_EQ(
      call(peer(kController, 71), "POST", "/gpu/1/power_limit", R"({"power_limit_mw": 120000})")
          .status,
      200);
  EXPECT_EQ(service_->leases().size(), 2u);
  service_->restore_all();
  EXPECT_EQ(limit_mw(1), 300000u);
  EXPECT_TRUE(service_->leases().empty());
}

TEST_F(ZeusdServiceTest, ChangesNeedAProcessToTieTheLeaseTo) {
  Peer tcp = peer(kController, -1);
  tcp.unix_socket = false;
  HttpResponse response = call(tcp, "POST", "/gpu/0/power_limit", R"({"power_limit_mw": 200000})");
  EXPECT_EQ(response.status, 403);
  EXPECT_NE(response.body.find("Unix socket"), std::string::npos);
  EXPECT_EQ(call(tcp, "GET", "/gpu/0/power_limit").status, 403);  // uid 1000 lacks gpu-read
  watcher_.exited.insert(80);
  EXPECT_EQ(
      call(peer(kController, 80), "POST", "/gpu/0/power_limit", R"({"power_limit_mw": 200000})")
          .status,
      400);
  EXPECT_EQ(limit_mw(0), 300000u);
  EXPECT_TRUE(service_->leases().empty());
}

TEST_F(ZeusdServiceTest, C7_TcpPeerRefusedGpuControlIsToldTcpIsReadOnlyNotToGetAllowed) {
  // uid 3000 is on no allow-list; over TCP no --allow entry could ever grant a change.
  Peer tcp = peer(kStrangerUid, -1, {kReaderGroup});
  tcp.unix_socket = false;
  for (const char* method : {"POST", "DELETE"}) {
    HttpResponse response =
        call(tcp, method, "/gpu/0/power_limit", R"({"power_limit_mw": 200000})");
    EXPECT_EQ(response.status, 403);
    const std::string message = body_of(response)["message"];
    EXPECT_NE(message.find("TCP port is read-only"), std::string::npos) << message;
    EXPECT_NE(message.find("Unix socket"), std::string::npos) << message;
    EXPECT_EQ(message.find("--allow"), std::string::npos) << message;
  }
  EXPECT_EQ(limit_mw(0), 300000u);
}

TEST_F(ZeusdServiceTest, DeviceErrorsMapToStatuses) {
  gpus_[0]->set_deny_control(true);
  HttpResponse response =
      call(peer(kController, 90), "POST", "/gpu/0/power_limit", R"({"power_limit_mw": 200000})");
  EXPECT_EQ(response.status, 500);
  EXPECT_NE(response.body.find("run it as root"), std::string::npos);
  EXPECT_TRUE(service_->leases().empty());  // a failed first change leaves no lease
  gpus_[1]->set_read_error(Error{ErrorCode::kUnavailable, "GPU is lost"});
  EXPECT_EQ(call(peer(0, 91), "GET", "/gpu/1/power").status, 503);
}

TEST_F(ZeusdServiceTest, ReadsMatchTheDevices) {
  const Peer reader = peer(kStrangerUid, 100, {kReaderGroup});
  clock_.advance_s(2.0);
  json energy = body_of(call(reader, "GET", "/gpu/0/energy"));
  EXPECT_EQ(energy["total_energy_mj"], 500000);  // 250 W x 2 s
  json power = body_of(call(reader, "GET", "/gpu/0/power"));
  EXPECT_EQ(power["instant_power_mw"], 250000);
  EXPECT_EQ(body_of(call(reader, "GET", "/gpu/0/persistence_mode"))["enabled"], false);
  tree_.set_package_energy_uj(0, 4000);
  json cpu = body_of(call(reader, "GET", "/cpu/0/energy"));
  EXPECT_EQ(cpu["package_energy_uj"], 3000);  // counted from the first read, like RaplCpu
  EXPECT_EQ(cpu["dram_energy_uj"], 0);
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
