// ZeusdService with a signing key: the gate in front of both route tables, whoami, the allow-list
// beside tokens on the Unix socket, and TCP changes that persist instead of being leased.
#include <gtest/gtest.h>

#include <ctime>
#include <nlohmann/json.hpp>

#include "zeus/device/replay_gpu.h"
#include "zeusd/jwt_token.h"
#include "zeusd/zeusd_service.h"

namespace zeus::zeusd {
namespace {

using nlohmann::json;

const std::string kTokenKey = "service-test-key\n";

class TokenServiceTest : public ::testing::Test {
 protected:
  TokenServiceTest() {
    for (int i = 0; i < 2; ++i) {
      ReplayGpuConfig config;
      config.uuid = "GPU-token-" + std::to_string(i);
      config.power_model = ReplayGpu::capped_power_model(250.0);
      auto gpu = std::make_unique<ReplayGpu>(clock_, config);
      gpus_.push_back(gpu.get());
      devices_.gpus.push_back(std::move(gpu));
    }
    AllowList allow;
    ZEUS_CHECK(allow.add("gpu-read=1000").has_value(), "allow");
    AccessPolicy access;
    access.signing_key = kTokenKey;
    service_ = std::make_unique<ZeusdService>(devices_, std::move(allow), watcher_, nullptr,
                                              UpstreamOptions{0.0}, access);
  }

  static std::string token(std::vector<Capability> scopes, std::string sub = "alice") {
    return *issue_token(kTokenKey, TokenIdentity{std::move(sub), std::move(scopes),
                                            static_cast<int64_t>(std::time(nullptr)) + 3600});
  }
  HttpResponse call(const Peer& who, const std::string& method, const std::string& target,
                    const std::string& bearer = "") {
    HttpRequest request;
    request.method = method;
    std::string why;
    EXPECT_TRUE(http::decode_target(target, &request, &why)) << why;
    if (!bearer.empty()) request.headers.emplace_back("authorization", "Bearer " + bearer);
    return service_->handle(request, who);
  }
  static Peer tcp() {
    Peer p;
    p.uid = 65534;
    p.unix_socket = false;
    return p;
  }
  static Peer local(uint32_t uid, int pid) {
    Peer p;
    p.uid = uid;
    p.gid = uid;
    p.pid = pid;
    return p;
  }

  FakeClock clock_;
  Devices devices_;
  std::vector<ReplayGpu*> gpus_;
  NullProcessWatcher watcher_;
  std::unique_ptr<ZeusdService> service_;
};

TEST_F(TokenServiceTest, WhoamiEchoesTheToken) {
  HttpResponse r = call(tcp(), "GET", "/auth/whoami", token({Capability::kGpuRead}));
  ASSERT_EQ(r.status, 200) << r.body;
  json answer = json::parse(r.body);
  EXPECT_EQ(answer["sub"], "alice");
  EXPECT_EQ(answer["scopes"], json({"gpu-read"}));
  EXPECT_TRUE(answer["exp"].is_number_unsigned());
  EXPECT_EQ(call(tcp(), "GET", "/auth/whoami").status, 401);
}

TEST_F(TokenServiceTest, DiscoverSaysAuthIsRequired) {
  HttpResponse r = call(tcp(), "GET", "/discover");
  ASSERT_EQ(r.status, 200);
  json answer = json::parse(r.body);
  EXPECT_EQ(answer["auth_required"], true);
  EXPECT_EQ(answer["enabled_api_groups"], json({"gpu-control", "gpu-read", "cpu-read"}));
}

TEST_F(TokenServiceTest, TcpChangeWithTokenPersistsAndIsListed) {
  const std::string control = token({Capability::kGpuControl, Capability::kGpuRead});
  HttpResponse r = call(tcp(), "POST", "/gpu/set_power_limit?gpu_ids=1&power_limit_mw=150000&block=true",
                        control);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(*gpus_[1]->power_limit_mw(), 150000u);
  EXPECT_TRUE(service_->leases().empty());  // no process lease
  json listed = json::parse(call(tcp(), "GET", "/leases", control).body);
  ASSERT_EQ(listed["persistent"].size(), 1u) << listed;
  EXPECT_EQ(listed["persistent"][0]["subject"], "alice");
  EXPECT_EQ(listed["persistent"][0]["gpu"], 1);
  EXPECT_EQ(listed["persistent"][0]["knob"], "power_limit");
  // Nothing restores it: not a process exit, not a zeusd stop.
  service_->restore_all();
  EXPECT_EQ(*gpus_[1]->power_limit_mw(), 150000u);
  // A reset over TCP puts the default back and forgets the record.
  r = call(tcp(), "POST", "/gpu/reset_power_limit?gpu_ids=1&block=true", control);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(*gpus_[1]->power_limit_mw(), 300000u);
  listed = json::parse(call(tcp(), "GET", "/leases", control).body);
  EXPECT_TRUE(listed["persistent"].empty()) << listed;
}

// operators.md's epilog "resets" with set_power_limit to the default
// (upstream has no reset route for the limit); that set, or one back to the limit before the
// first persistent change, ends the entry as reset_power_limit does. Other sets keep it listed.
TEST_F(TokenServiceTest, TcpSetBackToTheDefaultOrTheOriginalLimitClearsThePersistentEntry) {
  const std::string control = token({Capability::kGpuControl, Capability::kGpuRead});
  auto set = [&](int gpu, int mw) {
    HttpResponse r = call(tcp(), "POST",
                          "/gpu/set_power_limit?gpu_ids=" + std::to_string(gpu) +
                              "&power_limit_mw=" + std::to_string(mw) + "&block=true",
                          control);
    EXPECT_EQ(r.status, 200) << r.body;
  };
  auto persistent = [&] {
    return json::parse(call(tcp(), "GET", "/leases", control).body)["persistent"];
  };
  // GPU 0: default 300000 mW. Two sets stay listed, the latest described; the default ends it.
  set(0, 150000);
  set(0, 200000);
  ASSERT_EQ(persistent().size(), 1u) << persistent();
  EXPECT_EQ(persistent()[0]["changed"], "set power limit 150000 -> 200000 mW");
  set(0, 300000);
  EXPECT_EQ(*gpus_[0]->power_limit_mw(), 300000u);
  EXPECT_TRUE(persistent().empty()) << persistent();
  // GPU 1 starts at 250000 mW (set by hand, not over zeusd): back to 250000 ends its entry too.
  ASSERT_TRUE(gpus_[1]->set_power_limit_mw(250000));
  set(1, 120000);
  set(1, 180000);
  ASSERT_EQ(persistent().size(), 1u);
  set(1, 250000);
  EXPECT_TRUE(persistent().empty()) << persistent();
  // A set to the limit in force with no entry adds none.
  set(1, 250000);
  EXPECT_TRUE(persistent().empty()) << persistent();
  // Persistence mode is not a limit: its entry stays until its own change.
  HttpResponse r = call(tcp(), "POST", "/gpu/set_persistence_mode?gpu_ids=0&enabled=true&block=true",
                        control);
  ASSERT_EQ(r.status, 200) << r.body;
  set(0, 300000);
  ASSERT_EQ(persistent().size(), 1u) << persistent();
  EXPECT_EQ(persistent()[0]["knob"], "persistence_mode");
}

TEST_F(TokenServiceTest, TcpChangeRefusedWhileALocalProcessHoldsTheGpu) {
  // Root on the socket (allowed by the allow-list) with a control token takes a lease on GPU 0.
  const std::string control = token({Capability::kGpuControl});
  HttpResponse r = call(local(0, 4242), "POST",
                        "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=200000&block=true", control);
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(service_->leases().size(), 1u);
  r = call(tcp(), "POST", "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=120000&block=true", control);
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(*gpus_[0]->power_limit_mw(), 200000u);
  service_->on_process_exit(4242);
  EXPECT_EQ(*gpus_[0]->power_limit_mw(), 300000u);  // the lease restored the default
}

TEST_F(TokenServiceTest, SocketNeedsTheTokenAndTheAllowList) {
  // uid 1000 may read (allow-list) but sends no token: 401.
  EXPECT_EQ(call(local(1000, 7), "GET", "/gpu/get_power_limit").status, 401);
  EXPECT_EQ(call(local(1000, 7), "GET", "/gpu/get_power_limit", token({Capability::kGpuRead})).status,
            200);
  // A token with gpu-control does not lift the allow-list on the socket.
  HttpResponse r = call(local(1000, 7), "POST",
                        "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=200000&block=true",
                        token({Capability::kGpuControl}));
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(*gpus_[0]->power_limit_mw(), 300000u);
}

TEST_F(TokenServiceTest, ScopeDecidesOverTcp) {
  HttpResponse r = call(tcp(), "POST", "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=200000&block=true",
                        token({Capability::kGpuRead}));
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(*gpus_[0]->power_limit_mw(), 300000u);
  EXPECT_EQ(
      call(tcp(), "GET", "/gpu/get_power_limit?gpu_ids=0", token({Capability::kGpuRead})).status,
      200);
}

}  // namespace
}  // namespace zeus::zeusd
