// HealthProbe (health_probe.h): /healthz reads a thread's newest ping, so a store that hangs
// never blocks the HTTP layer's event loop (found while making /healthz answer 503 with the
// store down).
#include "server/health_probe.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace zeus::server {
namespace {

using namespace std::chrono_literals;

// A store whose ping answers as told, or hangs until released.
class ScriptedStore final : public Store {
 public:
  Result<void> transact(const std::function<Result<void>(StoreTransaction&)>&) override {
    return fail(ErrorCode::kInternal, "not used");
  }
  Result<void> ping() override {
    pings.fetch_add(1);
    while (hang.load()) std::this_thread::sleep_for(1ms);
    if (down.load()) return fail(ErrorCode::kUnavailable, "cannot connect to db: refused");
    return ok();
  }
  std::atomic<bool> down{false}, hang{false};
  std::atomic<int> pings{0};
};

TEST(HealthProbeTest, ReportsTheNewestPingAndAStoreThatHangsWithoutWaitingOnIt) {
  ScriptedStore store;
  HealthProbe probe(store, {.interval_s = 0.02, .stall_s = 0.1});
  EXPECT_TRUE(probe.status().has_value());
  store.down = true;
  std::this_thread::sleep_for(100ms);
  Result<void> down = probe.status();
  ASSERT_FALSE(down.has_value());
  EXPECT_EQ(down.error().message, "cannot connect to db: refused");
  store.down = false;
  store.hang = true;
  std::this_thread::sleep_for(250ms);
  const auto before = std::chrono::steady_clock::now();
  Result<void> hung = probe.status();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 10ms);  // answered, not waited for
  ASSERT_FALSE(hung.has_value());
  EXPECT_NE(hung.error().message.find("has not answered a ping"), std::string::npos);
  store.hang = false;
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(probe.status().has_value());
  EXPECT_GE(store.pings.load(), 5);
}

}  // namespace
}  // namespace zeus::server
