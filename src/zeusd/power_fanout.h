// PowerFanout: one poller shared by every listener of one power stream (zeusd's
// /gpu/stream_power or /cpu/stream_power). The poller thread runs only while someone listens: it
// sleeps until the first listener subscribes, then calls `poll` at poll_hz (ticks on a fixed
// schedule; a late tick is not made up) and hands each event to the listeners of its device,
// and pauses when the last one leaves. A new listener gets the latest event of each of its
// devices at once (the power now, even when it does not change), then every new one.
// Listeners are sinks that never block (an EventStream, which drops a listener that falls too
// far behind): a sink that answers false, or whose alive() turns false (checked every tick, so a
// listener that hung up is noticed even when nothing changes), is removed. A listener that was
// sent nothing for keepalive_s gets an empty data (the route writes an SSE comment), so a quiet
// stream's client can tell a live daemon from a dead one.
// No I/O of its own: `poll` reads the devices; tests drive it with plain functions.
// Thread-safety: every method may be called from any thread; sinks are called on the poller's
// thread (and on the subscriber's, for the first events) with the fan-out's lock held, so a sink
// must not call back into the fan-out.
//
//   PowerFanout fanout("GPU", 20, [&](bool restart) { return read_changes(restart); });
//   auto id = fanout.subscribe({0, 1}, [s](std::string_view e) { return s->send(e); },
//                              [s] { return s->open(); });
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace zeus::zeusd {

class PowerFanout {
 public:
  struct Event {
    int device_id = 0;
    std::string data;  // the event's JSON
  };
  // One tick's events; `restart`: the first tick since the poller (re)started, when every device
  // should be reported (the listeners know nothing yet).
  using PollFn = std::function<std::vector<Event>(bool restart)>;
  // One event's data, or empty: a keep-alive.
  using Sink = std::function<bool(std::string_view data)>;
  using Alive = std::function<bool()>;

  // `poll_hz` in (0, 1000]; anything else polls at 1 Hz (zeusd checks its options before).
  PowerFanout(std::string name, double poll_hz, PollFn poll, double keepalive_s = 1.0);
  ~PowerFanout();  // stop()
  PowerFanout(const PowerFanout&) = delete;
  PowerFanout& operator=(const PowerFanout&) = delete;

  // Adds a listener of `device_ids`; answers its id for unsubscribe().
  uint64_t subscribe(std::set<int> device_ids, Sink sink, Alive alive);
  void unsubscribe(uint64_t id);
  // Ends the poller thread (listeners are dropped); idempotent.
  void stop();

  size_t listeners() const;
  bool polling() const;    // the poller is between its first and last listener
  uint64_t ticks() const;  // polls made since construction
  uint64_t sent() const;   // events handed to sinks since construction

 private:
  struct Listener {
    std::set<int> devices;
    Sink sink;
    Alive alive;
    double last_sent_s = 0;  // steady clock
  };
  void run();
  void deliver_locked(const std::vector<Event>& events);
  void sweep_locked();

  const std::string name_;
  const double period_s_;
  const double keepalive_s_;
  const PollFn poll_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::map<uint64_t, Listener> listeners_;
  std::map<int, std::string> latest_;  // the last event of each device while polling
  uint64_t next_id_ = 1;
  uint64_t ticks_ = 0;
  uint64_t sent_ = 0;
  bool polling_ = false;
  bool stopping_ = false;
  std::thread thread_;  // started by the first subscribe()
};

}  // namespace zeus::zeusd
