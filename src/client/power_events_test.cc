// The pure client side of zeusd's power streams: SSE split across arbitrary pieces, event
// decoding (and its refusals), energy integration of piecewise-constant power, and the addresses
// PowerStreamingClient accepts.
#include "client/power_events.h"

#include <gtest/gtest.h>

#include "zeus/client/power_streaming_client.h"

namespace zeus::client {
namespace {

TEST(SseSplitter, EventsCutAnywhereComeOutWholeAndCommentsAreSkipped) {
  const std::string stream =
      ": keep-alive\n\ndata: {\"a\":1}\n\nevent: x\ndata: two\ndata: lines\n\ndata:nospace\r\n\r\n";
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    SseSplitter sse;
    std::vector<std::string> got = sse.feed(stream.substr(0, cut));
    for (std::string& d : sse.feed(stream.substr(cut))) got.push_back(d);
    EXPECT_EQ(got, (std::vector<std::string>{"{\"a\":1}", "two\nlines", "nospace"})) << cut;
  }
}

// A keep-alive (a block of comments only) is counted, so the client
// can say "the power holds" on a steady GPU instead of looking hung.
TEST(SseSplitter, KeepAlivesAreCountedNotMistakenForReadings) {
  SseSplitter sse;
  EXPECT_EQ(sse.feed(": keep-alive\n\n: keep-alive\r\n\r\n: half"), std::vector<std::string>{});
  EXPECT_EQ(sse.take_keepalives(), 2u);
  EXPECT_EQ(sse.take_keepalives(), 0u);
  EXPECT_EQ(sse.feed("\n\ndata: x\n: note in an event\n\n"), std::vector<std::string>{"x"});
  EXPECT_EQ(sse.take_keepalives(), 1u);  // the one that was cut, not the event's comment
}

TEST(SseSplitter, AnEndlessEventIsDroppedNotBufferedForever) {
  SseSplitter sse(100);
  EXPECT_TRUE(sse.feed("data: " + std::string(200, 'x')).empty());
  EXPECT_TRUE(sse.overflowed());
  EXPECT_EQ(sse.feed("\n\ndata: ok\n\n"), (std::vector<std::string>{"ok"}));
}

TEST(PowerEvents, GpuAndCpuEventsDecodeInWattsAndSeconds) {
  auto gpu =
      parse_power_event(R"({"timestamp_ms":1700000000500,"gpu_id":3,"power_mw":350500})", true);
  ASSERT_TRUE(gpu.has_value());
  EXPECT_EQ(gpu->device_id, 3);
  EXPECT_DOUBLE_EQ(gpu->power_w, 350.5);
  EXPECT_DOUBLE_EQ(gpu->timestamp_s, 1700000000.5);
  auto cpu = parse_power_event(R"({"timestamp_ms":1000,"cpu_id":1,"cpu_mw":95000,"dram_mw":12000})",
                               false);
  ASSERT_TRUE(cpu.has_value());
  EXPECT_DOUBLE_EQ(cpu->power_w, 95.0);
  EXPECT_EQ(cpu->dram_w, std::optional<double>(12.0));
  auto no_dram =
      parse_power_event(R"({"timestamp_ms":1000,"cpu_id":1,"cpu_mw":95000,"dram_mw":null})", false);
  ASSERT_TRUE(no_dram.has_value());
  EXPECT_FALSE(no_dram->dram_w.has_value());
}

TEST(PowerEvents, MalformedEventsAreRefusedWithWhatIsWrong) {
  for (const char* bad : {"not json", "[]", R"({"gpu_id":0,"power_mw":1})",
                          R"({"timestamp_ms":1,"gpu_id":-1,"power_mw":1})",
                          R"({"timestamp_ms":1,"gpu_id":0,"power_mw":"x"})"}) {
    auto event = parse_power_event(bad, true);
    ASSERT_FALSE(event.has_value()) << bad;
    EXPECT_NE(event.error().message.find("GPU power event"), std::string::npos);
  }
  EXPECT_FALSE(parse_power_event(R"({"timestamp_ms":1,"gpu_id":0,"power_mw":1})", false));
}

// Negative, non-finite and implausible powers and device ids beyond any
// machine's are refused (they poisoned the node's and the cluster's sums, and ids >= 2^32
// aliased GPU 0).
TEST(PowerEvents, StreamValues_ImplausibleReadingsAreRefused) {
  for (const char* bad :
       {R"({"timestamp_ms":1,"gpu_id":0,"power_mw":-500000})",
        R"({"timestamp_ms":1,"gpu_id":0,"power_mw":1e300})",
        R"({"timestamp_ms":1,"gpu_id":0,"power_mw":100000001})",
        R"({"timestamp_ms":1,"gpu_id":4294967296,"power_mw":1000})",
        R"({"timestamp_ms":1,"gpu_id":65536,"power_mw":1000})",
        R"({"timestamp_ms":-5,"gpu_id":0,"power_mw":1000})",
        R"({"timestamp_ms":1e400,"gpu_id":0,"power_mw":1000})"}) {
    EXPECT_FALSE(parse_power_event(bad, true)) << bad;
  }
  EXPECT_FALSE(parse_power_event(R"({"timestamp_ms":1,"cpu_id":0,"cpu_mw":1,"dram_mw":-3})", false));
  EXPECT_TRUE(parse_power_event(R"({"timestamp_ms":1,"gpu_id":65535,"power_mw":100000000})", true));
}

// A reading dated before the last one (a daemon clock stepping back, or after
// a reading dated in the future) changes the power at the last reading's time; the count goes on.
TEST(PowerIntegrator, StreamTime_AReadingFromThePastNeverStopsTheCount) {
  PowerIntegrator energy;
  energy.set("gpu0", 300, 1e6);  // a reading far in the future
  energy.set("gpu0", 200, 10.0);
  EXPECT_EQ(energy.power_w("gpu0"), std::optional<double>(200));
  EXPECT_DOUBLE_EQ(energy.energy_j("gpu0", 1e6 + 2), 400);
}

TEST(PowerIntegrator, EnergyIsPowerTimesTimeBetweenReadingsAndUpToNow) {
  PowerIntegrator energy;
  energy.set("gpu0", 300, 10.0);
  energy.set("gpu0", 400, 12.0);  // 600 J so far
  EXPECT_DOUBLE_EQ(energy.energy_j("gpu0", 12.0), 600);
  EXPECT_DOUBLE_EQ(energy.energy_j("gpu0", 13.5), 1200);  // and 1.5 s at 400 W
  energy.set("gpu0", 400, 11.0);  // older than the last reading: takes effect at 12.0
  EXPECT_EQ(energy.power_w("gpu0"), std::optional<double>(400));
  energy.pause("gpu0", 14.0);  // dropped: stops at 1400 J, power unknown
  EXPECT_DOUBLE_EQ(energy.energy_j("gpu0", 20.0), 1400);
  EXPECT_FALSE(energy.power_w("gpu0").has_value());
  energy.set("gpu0", 100, 20.0);  // back: counts again from its reading, the gap is not guessed
  EXPECT_DOUBLE_EQ(energy.energy_j("gpu0", 21.0), 1500);
  EXPECT_DOUBLE_EQ(energy.energy_j("unknown", 21.0), 0);
}

TEST(StreamAddress, TcpUnixAndIpv6FormsAndClearRefusals) {
  auto tcp = parse_stream_address("node1:4938");
  ASSERT_TRUE(tcp.has_value());
  EXPECT_EQ(tcp->host, "node1");
  EXPECT_EQ(tcp->port, 4938);
  auto v6 = parse_stream_address("[::1]:80");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(parse_stream_address("unix:/run/zeusd.sock")->socket_path, "/run/zeusd.sock");
  EXPECT_EQ(parse_stream_address("/run/zeusd.sock")->socket_path, "/run/zeusd.sock");
  for (const char* bad :
       {"node1", "node1:", "node1:0", "node1:70000", "::1:80", "unix:rel", ":80", "host:8x"}) {
    auto address = parse_stream_address(bad);
    ASSERT_FALSE(address.has_value()) << bad;
    EXPECT_NE(address.error().message.find("HOST:PORT"), std::string::npos);
  }
}

}  // namespace
}  // namespace zeus::client
