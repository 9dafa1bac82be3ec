#include "zeusd/request_gate.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "zeusd/jwt_token.h"

namespace zeus::zeusd {
namespace {

using nlohmann::json;

const std::string kGateKey = "gate-test-key";
constexpr int64_t kGateNow = 1'800'000'000;

http::HttpRequest request(std::string method, std::string path,
                          std::vector<std::string> authorization = {}) {
  http::HttpRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  for (auto& value : authorization) r.headers.emplace_back("authorization", std::move(value));
  return r;
}

std::string bearer(std::vector<Capability> scopes, std::optional<int64_t> exp = std::nullopt) {
  return "Bearer " + *issue_token(kGateKey, TokenIdentity{"alice", std::move(scopes), exp});
}

AccessPolicy with_key() {
  AccessPolicy policy;
  policy.signing_key = kGateKey;
  return policy;
}

std::string error_of(const http::HttpResponse& response) {
  return json::parse(response.body).at("error").get<std::string>();
}

bool has_challenge(const http::HttpResponse& response) {
  for (const auto& [name, value] : response.headers) {
    if (name == "WWW-Authenticate" && value == "Bearer realm=\"zeusd\"") return true;
  }
  return false;
}

TEST(RequestGate, GroupOfEachPath) {
  using C = Capability;
  EXPECT_EQ(required_group("/gpu/set_power_limit"), C::kGpuControl);
  EXPECT_EQ(required_group("/gpu/reset_locked_clocks"), C::kGpuControl);
  EXPECT_EQ(required_group("/gpu/get_power"), C::kGpuRead);
  EXPECT_EQ(required_group("/gpu/stream_power"), C::kGpuRead);
  EXPECT_EQ(required_group("/cpu/get_cumulative_energy"), C::kCpuRead);
  // The removed /gpu/{i}/<knob> routes fall under their prefix's group.
  EXPECT_EQ(required_group("/gpu/0/power_limit"), C::kGpuRead);
  EXPECT_EQ(required_group("/cpu/0/energy"), C::kCpuRead);
  EXPECT_EQ(required_group("/leases"), C::kGpuRead);
  EXPECT_EQ(required_group("/discover"), std::nullopt);
  EXPECT_EQ(required_group("/time"), std::nullopt);
  EXPECT_EQ(required_group("/auth/whoami"), std::nullopt);
  EXPECT_EQ(required_group("/nowhere"), std::nullopt);
}

TEST(RequestGate, WithoutKeyEverythingPassesToTheRoutes) {
  GateDecision d = check_access(request("POST", "/gpu/set_power_limit"), AccessPolicy{}, kGateNow);
  EXPECT_FALSE(d.refusal);
  EXPECT_FALSE(d.token);
}

TEST(RequestGate, DisabledGroupIs404BeforeAuthentication) {
  AccessPolicy policy = with_key();
  policy.enabled = {false, true, false};  // gpu-read only
  for (const char* path : {"/cpu/get_power", "/cpu/0/energy"}) {
    GateDecision d = check_access(request("GET", path), policy, kGateNow);  // no token at all
    ASSERT_TRUE(d.refusal) << path;
    EXPECT_EQ(d.refusal->status, 404);
    EXPECT_EQ(error_of(*d.refusal), "API group 'cpu-read' is not enabled on this server.");
  }
  GateDecision control = check_access(request("POST", "/gpu/set_power_limit"), policy, kGateNow);
  ASSERT_TRUE(control.refusal);
  EXPECT_EQ(control.refusal->status, 404);
  // An enabled group still needs the token.
  GateDecision read = check_access(request("GET", "/gpu/get_power"), policy, kGateNow);
  ASSERT_TRUE(read.refusal);
  EXPECT_EQ(read.refusal->status, 401);
  EXPECT_EQ(policy.enabled_names(), std::vector<std::string>{"gpu-read"});
}

TEST(RequestGate, DiscoverAndTimeAreOpen) {
  for (const char* path : {"/discover", "/time"}) {
    EXPECT_FALSE(check_access(request("GET", path), with_key(), kGateNow).refusal) << path;
  }
}

TEST(RequestGate, MissingOrMalformedHeaderIs401WithChallenge) {
  const std::string good = bearer({Capability::kGpuRead});
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"Basic YWxpY2U6cHc="},
      {"bearer " + good.substr(7)},  // the scheme is matched exactly, as upstream
      {"Bearer"},
      {"Bearer "},
      {"Bearer not.a.jwt"},
      {good, good},  // two headers: ambiguous
  };
  for (const auto& headers : cases) {
    GateDecision d = check_access(request("GET", "/gpu/get_power", headers), with_key(), kGateNow);
    ASSERT_TRUE(d.refusal) << (headers.empty() ? "none" : headers[0]);
    EXPECT_EQ(d.refusal->status, 401);
    EXPECT_TRUE(has_challenge(*d.refusal));
    EXPECT_FALSE(error_of(*d.refusal).empty());
  }
  // Unknown paths need a token too (then the router answers 404).
  EXPECT_EQ(check_access(request("GET", "/nowhere"), with_key(), kGateNow).refusal->status, 401);
}

TEST(RequestGate, ExpiredTokenIs401) {
  GateDecision d = check_access(
      request("GET", "/gpu/get_power", {bearer({Capability::kGpuRead}, kGateNow - 61)}), with_key(),
      kGateNow);
  ASSERT_TRUE(d.refusal);
  EXPECT_EQ(d.refusal->status, 401);
  EXPECT_EQ(error_of(*d.refusal), "Token has expired.");
}

TEST(RequestGate, MissingScopeIs403NamingIt) {
  GateDecision d =
      check_access(request("POST", "/gpu/set_power_limit", {bearer({Capability::kGpuRead})}),
                   with_key(), kGateNow);
  ASSERT_TRUE(d.refusal);
  EXPECT_EQ(d.refusal->status, 403);
  EXPECT_EQ(error_of(*d.refusal),
            "Token for user 'alice' lacks required scope 'gpu-control'. Token scopes: "
            "['gpu-read']");
  EXPECT_FALSE(has_challenge(*d.refusal));
}

TEST(RequestGate, GoodTokenPassesWithItsIdentity) {
  GateDecision d = check_access(
      request("GET", "/auth/whoami", {bearer({Capability::kCpuRead}, kGateNow + 10)}), with_key(),
      kGateNow);
  ASSERT_FALSE(d.refusal);
  ASSERT_TRUE(d.token);
  EXPECT_EQ(d.token->subject, "alice");
  EXPECT_EQ(d.token->expires_unix_s, kGateNow + 10);
}

TEST(RequestGate, EnabledGroupsParsing) {
  auto groups = parse_enabled_groups({"gpu-read, cpu-read", "gpu-read"});
  ASSERT_TRUE(groups);
  EXPECT_EQ(*groups, (std::array<bool, kCapabilityCount>{false, true, true}));
  EXPECT_FALSE(parse_enabled_groups({"gpu-read,gpu-write"}));
  EXPECT_FALSE(parse_enabled_groups({""}));
  EXPECT_FALSE(parse_enabled_groups({}));
}

}  // namespace
}  // namespace zeus::zeusd
