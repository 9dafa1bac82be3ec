#include "wire/zeusd_command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

namespace zeus::zeusd {
namespace {

// "a=1&b=true" -> the numbers and flags a route decodes (every value here is one or the other).
void split_query(const std::string& query, std::map<std::string, uint32_t>* numbers,
                 std::map<std::string, bool>* flags) {
  std::stringstream stream(query);
  std::string pair;
  while (std::getline(stream, pair, '&')) {
    const size_t equals = pair.find('=');
    const std::string name = pair.substr(0, equals), value = pair.substr(equals + 1);
    if (value == "true" || value == "false") {
      (*flags)[name] = value == "true";
    } else {
      (*numbers)[name] = static_cast<uint32_t>(std::stoul(value));
    }
  }
}

TEST(ZeusdCommand, EveryCommandRoundTripsThroughItsWriteRoute) {
  const std::vector<GpuCommand> commands = {
      SetPowerLimit{250000},          ResetPowerLimit{},          SetPersistenceMode{true},
      SetPersistenceMode{false},      LockGpuClocks{{900, 1410}}, ResetGpuClocks{},
      LockMemoryClocks{{1593, 1593}}, ResetMemoryClocks{},
  };
  for (const GpuCommand& command : commands) {
    const std::string target = gpu_command_target(command, 3, true);
    const std::string prefix = "/gpu/" + std::string(gpu_command_route(command)) + "?";
    ASSERT_EQ(target.rfind(prefix, 0), 0u) << target;
    std::map<std::string, uint32_t> numbers;
    std::map<std::string, bool> flags;
    split_query(target.substr(prefix.size()), &numbers, &flags);
    EXPECT_EQ(numbers.at("gpu_ids"), 3u) << target;
    EXPECT_TRUE(flags.at("block")) << target;
    const auto& routes = gpu_write_routes();
    auto route = std::find_if(routes.begin(), routes.end(), [&](const GpuWriteRoute& r) {
      return r.op == gpu_command_route(command);
    });
    ASSERT_NE(route, routes.end()) << target;
    // The target carries exactly the route's parameters (and gpu_ids, block).
    EXPECT_EQ(numbers.size(), route->numbers.size() + 1) << target;
    EXPECT_EQ(flags.size(), route->flags.size() + 1) << target;
    EXPECT_EQ(route->decode(numbers, flags), std::vector<GpuCommand>{command}) << target;
  }
}

TEST(ZeusdCommand, TargetsAreUpstreamsOwn) {
  EXPECT_EQ(gpu_command_target(SetPowerLimit{300000}, 0, true),
            "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000&block=true");
  EXPECT_EQ(gpu_command_target(LockGpuClocks{{600, 1200}}, 1, false),
            "/gpu/set_gpu_locked_clocks?gpu_ids=1&min_clock_mhz=600&max_clock_mhz=1200"
            "&block=false");
  EXPECT_EQ(gpu_command_target(SetPersistenceMode{true}, 2, true),
            "/gpu/set_persistence_mode?gpu_ids=2&enabled=true&block=true");
  EXPECT_EQ(gpu_command_target(ResetMemoryClocks{}, 0, true),
            "/gpu/reset_mem_locked_clocks?gpu_ids=0&block=true");
}

TEST(ZeusdCommand, ResetLockedClocksResetsBothKinds) {
  const auto& routes = gpu_write_routes();
  auto both = std::find_if(routes.begin(), routes.end(),
                           [](const GpuWriteRoute& r) { return r.op == "reset_locked_clocks"; });
  ASSERT_NE(both, routes.end());
  EXPECT_EQ(both->decode({}, {}), (std::vector<GpuCommand>{ResetGpuClocks{}, ResetMemoryClocks{}}));
  EXPECT_EQ(routes.size(), 8u);  // upstream's seven and reset_power_limit
}

TEST(ZeusdCommand, CapabilityNamesRoundTrip) {
  for (int c = 0; c < kCapabilityCount; ++c) {
    const auto capability = static_cast<Capability>(c);
    EXPECT_EQ(parse_capability(capability_name(capability)).value(), capability);
  }
  EXPECT_EQ(capability_name(Capability::kGpuControl), "gpu-control");
  EXPECT_EQ(parse_capability("gpu-write").error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace zeus::zeusd
