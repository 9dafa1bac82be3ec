#include "zeusd/route_table.h"

#include <gtest/gtest.h>

namespace zeus::zeusd {
namespace {

using Captures = std::vector<std::string>;

TEST(RouteTable, PatternsMatchLiteralSegmentsAndCaptureTheOthers) {
  EXPECT_EQ(match_pattern("/gpu/get_power", "/gpu/get_power"), Captures{});
  EXPECT_EQ(match_pattern("/lease_session/{id}/heartbeat", "/lease_session/3f9c/heartbeat"),
            Captures{"3f9c"});
  EXPECT_EQ(match_pattern("/gpu/{i}/power_limit", "/gpu/12/power_limit"), Captures{"12"});
  EXPECT_FALSE(match_pattern("/gpu/{i}/power_limit", "/gpu//power_limit"));  // empty capture
  EXPECT_FALSE(match_pattern("/gpu/{i}/power_limit", "/gpu/0/power_limit/"));
  EXPECT_FALSE(match_pattern("/gpu/{i}/power_limit", "/gpu/0"));
  EXPECT_FALSE(match_pattern("/discover", "/discovery"));
  EXPECT_FALSE(match_pattern("/discover", "discover"));
  EXPECT_FALSE(match_pattern("/discover", ""));
}

TEST(RouteTable, TheMethodPicksAmongRoutesOfOnePath) {
  std::vector<Route> routes(3);
  routes[0].method = "GET";
  routes[0].pattern = "/leases";
  routes[1].method = "DELETE";
  routes[1].pattern = "/lease_session/{id}";
  routes[2].method = "*";
  routes[2].pattern = "/gpu/{i}/power";
  RouteMatch get = match_route(routes, "GET", "/leases");
  EXPECT_EQ(get.route, 0u);
  RouteMatch post = match_route(routes, "POST", "/leases");
  EXPECT_FALSE(post.route);
  EXPECT_EQ(post.same_path, 0u);  // 405 material
  RouteMatch close = match_route(routes, "DELETE", "/lease_session/ab12");
  EXPECT_EQ(close.route, 1u);
  EXPECT_EQ(close.captures, Captures{"ab12"});
  EXPECT_EQ(match_route(routes, "PATCH", "/gpu/3/power").route, 2u);  // any method
  RouteMatch none = match_route(routes, "GET", "/nowhere");
  EXPECT_FALSE(none.route);
  EXPECT_FALSE(none.same_path);
}

TEST(RouteTable, FamiliesFollowUpstreamsScopes) {
  for (const char* path : {"/time", "/auth/whoami", "/auth/login", "/gpu/get_power",
                           "/gpu/anything", "/cpu/get_power", "/gpu/"}) {
    EXPECT_EQ(route_family(path), RouteFamily::kUpstream) << path;
  }
  for (const char* path : {"/lease_session", "/lease_session/ab12/heartbeat", "/lease_session/"}) {
    EXPECT_EQ(route_family(path), RouteFamily::kLeaseSession) << path;
  }
  for (const char* path : {"/discover", "/leases", "/gpu/0/power_limit", "/cpu/0/energy", "/",
                           "/lease_sessions", "/timer"}) {
    EXPECT_EQ(route_family(path), RouteFamily::kOurs) << path;
  }
}

}  // namespace
}  // namespace zeus::zeusd
