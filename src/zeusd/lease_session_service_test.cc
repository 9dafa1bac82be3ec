// ZeusdService's lease sessions over TCP with a signing key: a session's changes lease the GPU
// and are restored when the session expires (expire_sessions with a later clock) or is closed;
// heartbeats keep it; other subjects, unknown ids and the Unix socket are refused; a change
// without the header still persists.
#include <gtest/gtest.h>

#include <ctime>
#include <nlohmann/json.hpp>

#include "zeus/device/replay_gpu.h"
#include "zeusd/jwt_token.h"
#include "zeusd/zeusd_service.h"

namespace zeus::zeusd {
namespace {

using nlohmann::json;

const std::string kLeaseKey = "session-test-key\n";

class LeaseSessionServiceTest : public ::testing::Test {
 protected:
  LeaseSessionServiceTest() {
    for (int i = 0; i < 2; ++i) {
      ReplayGpuConfig config;
      config.uuid = "GPU-session-" + std::to_string(i);
      config.power_model = ReplayGpu::capped_power_model(250.0);
      auto gpu = std::make_unique<ReplayGpu>(clock_, config);
      gpus_.push_back(gpu.get());
      devices_.gpus.push_back(std::move(gpu));
    }
    AccessPolicy access;
    access.signing_key = kLeaseKey;
    service_ = std::make_unique<ZeusdService>(devices_, AllowList(), watcher_, nullptr,
                                              UpstreamOptions{0.0}, access, 2.0);
  }

  static std::string token(std::string sub) {
    return *issue_token(kLeaseKey, TokenIdentity{std::move(sub),
                                            {Capability::kGpuControl, Capability::kGpuRead},
                                            static_cast<int64_t>(std::time(nullptr)) + 3600});
  }
  HttpResponse call(const std::string& method, const std::string& target,
                    const std::string& session = "", const std::string& sub = "alice",
                    bool tcp = true) {
    HttpRequest request;
    request.method = method;
    std::string why;
    EXPECT_TRUE(http::decode_target(target, &request, &why)) << why;
    request.headers.emplace_back("authorization", "Bearer " + token(sub));
    if (!session.empty()) request.headers.emplace_back("x-zeusd-lease-session", session);
    Peer peer;
    peer.uid = tcp ? 65534 : 0;
    peer.pid = tcp ? -1 : 4242;
    peer.unix_socket = !tcp;
    return service_->handle(request, peer);
  }
  std::string open_session() {
    HttpResponse r = call("POST", "/lease_session");
    EXPECT_EQ(r.status, 200) << r.body;
    json answer = json::parse(r.body);
    EXPECT_EQ(answer["timeout_s"], 2.0);
    return answer["session_id"].get<std::string>();
  }
  uint32_t limit(int gpu) { return *gpus_[gpu]->power_limit_mw(); }
  static std::string set_limit(int gpu, uint32_t mw) {
    return "/gpu/set_power_limit?gpu_ids=" + std::to_string(gpu) +
           "&power_limit_mw=" + std::to_string(mw) + "&block=true";
  }

  FakeClock clock_;
  Devices devices_;
  std::vector<ReplayGpu*> gpus_;
  NullProcessWatcher watcher_;
  std::unique_ptr<ZeusdService> service_;
};

TEST_F(LeaseSessionServiceTest, SilenceRestoresAndHeartbeatsKeep) {
  const uint32_t before = limit(0);
  const std::string id = open_session();
  EXPECT_EQ(id.size(), 32u);
  ASSERT_EQ(call("POST", set_limit(0, 200000), id).status, 200);
  EXPECT_EQ(limit(0), 200000u);
  ASSERT_EQ(service_->leases().size(), 1u);
  EXPECT_EQ(service_->leases()[0].session, id);
  // Another subject cannot use or touch the session, and another caller gets 409 for the GPU.
  EXPECT_EQ(call("POST", set_limit(0, 210000), id, "mallory").status, 404);
  EXPECT_EQ(call("POST", "/lease_session/" + id + "/heartbeat", "", "mallory").status, 404);
  EXPECT_EQ(call("POST", set_limit(0, 210000)).status, 409);
  EXPECT_EQ(limit(0), 200000u);

  // Heartbeats: not expired 1.5 s after the last one.
  const int64_t now = ZeusdService::monotonic_ms();
  ASSERT_EQ(call("POST", "/lease_session/" + id + "/heartbeat").status, 200);
  service_->expire_sessions(now + 1500);
  EXPECT_EQ(limit(0), 200000u);
  // Silent for longer than 2 s: restored, and the session is gone.
  service_->expire_sessions(ZeusdService::monotonic_ms() + 2100);
  EXPECT_EQ(limit(0), before);
  EXPECT_TRUE(service_->leases().empty());
  HttpResponse late = call("POST", set_limit(0, 220000), id);
  EXPECT_EQ(late.status, 404);
  EXPECT_NE(late.body.find("unknown or expired"), std::string::npos) << late.body;
  EXPECT_EQ(limit(0), before);  // a late change is not made persistent
}

TEST_F(LeaseSessionServiceTest, CloseRestoresAtOnceAndNoHeaderPersists) {
  const uint32_t before = limit(1);
  const std::string id = open_session();
  ASSERT_EQ(call("POST", set_limit(1, 150000), id).status, 200);
  HttpResponse closed = call("DELETE", "/lease_session/" + id);
  ASSERT_EQ(closed.status, 200) << closed.body;
  EXPECT_EQ(json::parse(closed.body)["restored"], 1);
  EXPECT_EQ(limit(1), before);
  EXPECT_EQ(call("DELETE", "/lease_session/" + id).status, 404);

  // Upstream's semantics without the header: persists through any expiry.
  ASSERT_EQ(call("POST", set_limit(1, 160000)).status, 200);
  service_->expire_sessions(ZeusdService::monotonic_ms() + 100000);
  EXPECT_EQ(limit(1), 160000u);
  EXPECT_TRUE(service_->leases().empty());
}

TEST_F(LeaseSessionServiceTest, TheUnixSocketRefusesSessions) {
  const std::string id = open_session();
  EXPECT_EQ(call("POST", "/lease_session", "", "alice", false).status, 400);
  HttpResponse r = call("POST", set_limit(0, 200000), id, "alice", false);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("clients over TCP"), std::string::npos) << r.body;
  EXPECT_EQ(call("GET", "/lease_session").status, 405);
  // Sessions are capped; silent ones expire and make room again.
  for (size_t i = 1; i < kMaxLeaseSessions; ++i) {
    ASSERT_EQ(call("POST", "/lease_session").status, 200);
  }
  HttpResponse full = call("POST", "/lease_session");
  EXPECT_EQ(full.status, 503);
  EXPECT_NE(full.body.find("close unused ones"), std::string::npos) << full.body;
  service_->expire_sessions(ZeusdService::monotonic_ms() + 5000);
  EXPECT_EQ(call("POST", "/lease_session").status, 200);
  EXPECT_EQ(call("POST", "/lease_session/" + id + "/nothing").status, 404);
}

}  // namespace
}  // namespace zeus::zeusd
