// The pure core of zeusd's power streams: which GPU readings are events, CPU power from RAPL
// deltas over measured time, the events' JSON, and the demand-driven fan-out (no poll without a
// listener, one poller for many listeners, the latest value for a newcomer, dropped sinks).
#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "zeusd/power_fanout.h"
#include "zeusd/power_samples.h"

namespace zeus::zeusd {
namespace {

using namespace std::chrono_literals;

TEST(GpuChangeFilter, FirstReadingAndChangesAreNewsRepeatsAreNot) {
  GpuChangeFilter filter;
  EXPECT_TRUE(filter.changed(0, 300000));
  EXPECT_FALSE(filter.changed(0, 300000));
  EXPECT_TRUE(filter.changed(1, 300000));  // another GPU
  EXPECT_TRUE(filter.changed(0, 310000));
  EXPECT_FALSE(filter.changed(0, 310000));
  filter.reset();
  EXPECT_TRUE(filter.changed(0, 310000));
}

TEST(CpuPowerMeter, PowerIsTheEnergyDeltaOverTheMeasuredTime) {
  CpuPowerMeter meter;
  EXPECT_FALSE(meter.update({1'000'000, 500, 10.0}).has_value());  // baseline
  // 1 J package and 0.1 J DRAM over 0.5 s: 2 W and 0.2 W.
  auto power = meter.update({2'000'000, 100'500, 10.5});
  ASSERT_TRUE(power.has_value());
  EXPECT_EQ(power->cpu_mw, 2000u);
  EXPECT_EQ(power->dram_mw, std::optional<uint32_t>(200));
  // The same energy over a late tick (1 s): half the power, not the nominal period's.
  power = meter.update({3'000'000, std::nullopt, 11.5});
  ASSERT_TRUE(power.has_value());
  EXPECT_EQ(power->cpu_mw, 1000u);
  EXPECT_FALSE(power->dram_mw.has_value());
}

TEST(CpuPowerMeter, NoTimeKeepsTheBaselineAndABackwardCounterIsZero) {
  CpuPowerMeter meter;
  meter.update({1000, std::nullopt, 1.0});
  EXPECT_FALSE(meter.update({5000, std::nullopt, 1.0}).has_value());
  auto power = meter.update({1'001'000, std::nullopt, 2.0});  // from the first baseline
  ASSERT_TRUE(power.has_value());
  EXPECT_EQ(power->cpu_mw, 1000u);
  power = meter.update({10, std::nullopt, 3.0});
  ASSERT_TRUE(power.has_value());
  EXPECT_EQ(power->cpu_mw, 0u);
}

TEST(PowerEvents, CompactJsonWithUpstreamFieldNames) {
  EXPECT_EQ(event_json(GpuPowerSample{1700000000123, 2, 350000}),
            R"({"gpu_id":2,"power_mw":350000,"timestamp_ms":1700000000123})");
  EXPECT_EQ(event_json(CpuPowerSample{5, 0, 95000, 12000}),
            R"({"cpu_id":0,"cpu_mw":95000,"dram_mw":12000,"timestamp_ms":5})");
  EXPECT_EQ(event_json(CpuPowerSample{5, 1, 95000, std::nullopt}),
            R"({"cpu_id":1,"cpu_mw":95000,"dram_mw":null,"timestamp_ms":5})");
}

// A fan-out over a fake device: each tick reports device 0 (and 1) when `value` changed.
class FanoutTest : public ::testing::Test {
 protected:
  std::vector<PowerFanout::Event> poll(bool restart) {
    ++polls;
    if (restart) filter.reset();
    std::vector<PowerFanout::Event> events;
    for (int device : {0, 1}) {
      const uint32_t v = value.load() + static_cast<uint32_t>(device);
      if (filter.changed(device, v)) events.push_back({device, std::to_string(v)});
    }
    return events;
  }
  template <typename Pred>
  static bool eventually(Pred pred) {
    for (int i = 0; i < 300 && !pred(); ++i) std::this_thread::sleep_for(10ms);
    return pred();
  }

  std::atomic<uint32_t> value{100};
  std::atomic<int> polls{0};
  GpuChangeFilter filter;
  PowerFanout fanout{"test", 100, [this](bool restart) { return poll(restart); }};
};

// Collects what a listener got.
struct Collected {
  std::mutex mu;
  std::vector<std::string> events;
  std::atomic<bool> alive{true};
  int keepalives = 0;
  bool accept = true;
  PowerFanout::Sink sink() {
    return [this](std::string_view e) {
      std::lock_guard<std::mutex> lock(mu);
      if (e.empty()) {
        ++keepalives;
        return accept;
      }
      events.emplace_back(e);
      return accept;
    };
  }
  PowerFanout::Alive alive_fn() {
    return [this] { return alive.load(); };
  }
  std::vector<std::string> got() {
    std::lock_guard<std::mutex> lock(mu);
    return events;
  }
};

TEST_F(FanoutTest, PollsOnlyWhileSomeoneListens) {
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(polls.load(), 0);
  EXPECT_FALSE(fanout.polling());
  Collected a;
  const uint64_t id = fanout.subscribe({0}, a.sink(), a.alive_fn());
  ASSERT_TRUE(eventually([&] { return polls.load() >= 3; }));
  EXPECT_TRUE(fanout.polling());
  fanout.unsubscribe(id);
  ASSERT_TRUE(eventually([&] { return !fanout.polling(); }));
  const int stopped_at = polls.load();
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(polls.load(), stopped_at);
}

TEST_F(FanoutTest, ManyListenersShareOnePollerAndGetTheirDevicesOnly) {
  Collected zero, one, both;
  fanout.subscribe({0}, zero.sink(), zero.alive_fn());
  fanout.subscribe({1}, one.sink(), one.alive_fn());
  fanout.subscribe({0, 1}, both.sink(), both.alive_fn());
  ASSERT_TRUE(eventually([&] { return both.got().size() >= 2; }));
  const int before = polls.load();
  std::this_thread::sleep_for(200ms);
  // One poller at 100 Hz for three listeners: about 20 polls in 200 ms, not 60.
  EXPECT_LE(polls.load() - before, 30);
  value = 200;
  ASSERT_TRUE(eventually([&] { return both.got().size() >= 4; }));
  EXPECT_EQ(zero.got(), (std::vector<std::string>{"100", "200"}));
  EXPECT_EQ(one.got(), (std::vector<std::string>{"101", "201"}));
  EXPECT_EQ(both.got(), (std::vector<std::string>{"100", "101", "200", "201"}));
}

TEST_F(FanoutTest, ANewcomerGetsTheLatestValueAtOnce) {
  Collected first;
  fanout.subscribe({0, 1}, first.sink(), first.alive_fn());
  ASSERT_TRUE(eventually([&] { return first.got().size() >= 2; }));
  Collected late;
  fanout.subscribe({1}, late.sink(), late.alive_fn());
  // Nothing changes, yet the newcomer knows device 1's power straight away.
  EXPECT_EQ(late.got(), (std::vector<std::string>{"101"}));
}

TEST_F(FanoutTest, RefusingOrDeadListenersAreDroppedAndThePollerPauses) {
  Collected refusing, dying;
  refusing.accept = false;
  fanout.subscribe({0}, refusing.sink(), refusing.alive_fn());
  fanout.subscribe({1}, dying.sink(), dying.alive_fn());
  ASSERT_TRUE(eventually([&] { return refusing.got().size() == 1 && dying.got().size() == 1; }));
  ASSERT_TRUE(eventually([&] { return fanout.listeners() == 1; }));
  value = 300;  // the refusing listener is gone: it gets nothing more
  ASSERT_TRUE(eventually([&] { return dying.got().size() == 2; }));
  EXPECT_EQ(refusing.got().size(), 1u);
  dying.alive = false;  // hung up while nothing changes: noticed by the sweep
  ASSERT_TRUE(eventually([&] { return fanout.listeners() == 0 && !fanout.polling(); }));
}

TEST_F(FanoutTest, AQuietListenerGetsKeepAlives) {
  PowerFanout quick(
      "test", 100, [this](bool restart) { return poll(restart); }, 0.05);
  Collected a;
  quick.subscribe({0}, a.sink(), a.alive_fn());
  ASSERT_TRUE(eventually([&] {
    std::lock_guard<std::mutex> lock(a.mu);
    return a.keepalives >= 3;
  }));
  EXPECT_EQ(a.got(), (std::vector<std::string>{"100"}));  // nothing changed
}

TEST_F(FanoutTest, StopEndsThePollerAndLaterSubscribersGetNothing) {
  Collected a;
  fanout.subscribe({0}, a.sink(), a.alive_fn());
  ASSERT_TRUE(eventually([&] { return !a.got().empty(); }));
  fanout.stop();
  EXPECT_FALSE(fanout.polling());
  Collected b;
  fanout.subscribe({0}, b.sink(), b.alive_fn());
  EXPECT_TRUE(b.got().empty());
  EXPECT_EQ(fanout.listeners(), 0u);
}

}  // namespace
}  // namespace zeus::zeusd
