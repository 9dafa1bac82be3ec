#include "proxy/live_feed.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace zeus::proxy {
namespace {

using nlohmann::json;

// A listener that records what it was sent; `accept` false plays one the HTTP layer dropped.
class RecordingStream final : public http::EventStream {
 public:
  bool send(std::string_view data, std::string_view name) override {
    if (!accept) return false;
    events.emplace_back(std::string(name), json::parse(data));
    return true;
  }
  bool comment(std::string_view) override { return accept; }
  void close() override { accept = false; }
  bool open() const override { return accept; }
  bool accept = true;
  std::vector<std::pair<std::string, json>> events;
};

TEST(LiveFeedTest, PowerIsAveragedOverTheReadingsAndAResetStartsOver) {
  LiveFeed feed(LiveFeedLimits{.min_power_period_s = 0.1});
  const int s = feed.add_source("proxy", LiveFeed::gpus_label({0, 1}));
  feed.energy(s, 100.0, 1000);
  feed.energy(s, 100.05, 1010);  // too soon: folded into the next point
  feed.energy(s, 100.2, 1040);   // 40 J in 0.2 s
  feed.energy(s, 100.4, 10);     // reset: no point
  feed.energy(s, 100.6, 30);     // 20 J in 0.2 s
  const json snap = json::parse(feed.snapshot_json());
  EXPECT_EQ(snap["sources"][0]["gpus"], "GPU 0,1");
  const json& power = snap["sources"][0]["power"];
  ASSERT_EQ(power.size(), 2u);
  EXPECT_NEAR(power[0][1].get<double>(), 200, 1e-6);
  EXPECT_NEAR(power[1][1].get<double>(), 100, 1e-6);
}

TEST(LiveFeedTest, MemoryIsBoundedAndModelsAddUp) {
  LiveFeed feed(LiveFeedLimits{.max_requests = 3, .max_power_points = 2, .max_models = 2});
  const int s = feed.add_source("proxy", "all GPUs");
  for (int i = 0; i < 10; ++i) feed.energy(s, i, 100.0 * i);
  for (uint64_t id = 1; id <= 5; ++id) {
    const std::string model = id <= 3 ? "llama" : id == 4 ? "qwen" : "mistral";
    feed.started(s, id, model, 1);
    feed.finished(s, {id, model, 1, 2, 10.0 * id, 4, 200});
  }
  feed.started(s, 6, "llama", 3);
  const json snap = json::parse(feed.snapshot_json());
  EXPECT_EQ(snap["sources"][0]["power"].size(), 2u);
  ASSERT_EQ(snap["requests"].size(), 4u);  // the last 3 finished + 1 in flight
  EXPECT_EQ(snap["requests"][3]["end_s"], -1);
  EXPECT_EQ(snap["models"]["llama"]["requests"], 3);
  EXPECT_NEAR(snap["models"]["llama"]["energy_j"].get<double>(), 60, 1e-9);
  EXPECT_EQ(snap["models"]["llama"]["tokens"], 12);
  EXPECT_EQ(snap["models"]["(other)"]["requests"], 1);  // mistral: past max_models
  EXPECT_EQ(snap["models"].size(), 3u);
}

TEST(LiveFeedTest, ListenersGetTheSnapshotThenEventsAndDroppedOnesAreForgotten) {
  LiveFeed feed(LiveFeedLimits{.max_listeners = 2});
  const int s = feed.add_source("a", "GPU 0");
  auto fast = std::make_shared<RecordingStream>();
  auto slow = std::make_shared<RecordingStream>();
  ASSERT_TRUE(feed.subscribe(fast));
  ASSERT_TRUE(feed.subscribe(slow));
  EXPECT_TRUE(feed.full());
  EXPECT_FALSE(feed.subscribe(std::make_shared<RecordingStream>()));
  feed.started(s, 7, "llama", 5);
  slow->accept = false;  // the HTTP layer dropped it
  feed.finished(s, {7, "llama", 5, 6, 12.5, 3, 200});
  EXPECT_EQ(feed.listeners(), 1u);
  ASSERT_EQ(fast->events.size(), 3u);
  EXPECT_EQ(fast->events[0].first, "snapshot");
  EXPECT_EQ(fast->events[1].first, "start");
  EXPECT_EQ(fast->events[2].first, "end");
  EXPECT_EQ(fast->events[2].second["energy_j"], 12.5);
  EXPECT_EQ(fast->events[2].second["model"], "llama");
  EXPECT_EQ(slow->events.size(), 2u);
  EXPECT_TRUE(feed.subscribe(std::make_shared<RecordingStream>()));  // its slot is free again
}

}  // namespace
}  // namespace zeus::proxy
