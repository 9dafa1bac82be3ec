#include "zeusd/power_fanout.h"

#include <chrono>

#include "zeus/common/log.h"

namespace zeus::zeusd {

namespace {

double steady_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

PowerFanout::PowerFanout(std::string name, double poll_hz, PollFn poll, double keepalive_s)
    : name_(std::move(name)),
      // Outside (0, 1000] Hz (a caller's mistake): 1 Hz, rather than a busy or a stuck poller.
      period_s_(poll_hz > 0 && poll_hz <= 1000 ? 1.0 / poll_hz : 1.0),
      keepalive_s_(keepalive_s),
      poll_(std::move(poll)) {}

PowerFanout::~PowerFanout() { stop(); }

uint64_t PowerFanout::subscribe(std::set<int> device_ids, Sink sink, Alive alive) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t id = next_id_++;
  if (stopping_) return id;
  bool keep = true;
  for (int device : device_ids) {
    auto latest = latest_.find(device);
    if (latest == latest_.end()) continue;
    ++sent_;
    if (!sink(latest->second)) {
      keep = false;
      break;
    }
  }
  if (!keep) return id;
  listeners_.emplace(
      id, Listener{std::move(device_ids), std::move(sink), std::move(alive), steady_now_s()});
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  wake_.notify_all();
  return id;
}

void PowerFanout::unsubscribe(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  listeners_.erase(id);
}

void PowerFanout::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    listeners_.clear();
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

size_t PowerFanout::listeners() const {
  std::lock_guard<std::mutex> lock(mu_);
  return listeners_.size();
}

bool PowerFanout::polling() const {
  std::lock_guard<std::mutex> lock(mu_);
  return polling_;
}

uint64_t PowerFanout::ticks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ticks_;
}

uint64_t PowerFanout::sent() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sent_;
}

void PowerFanout::deliver_locked(const std::vector<Event>& events) {
  const double now_s = steady_now_s();
  for (const Event& event : events) {
    latest_[event.device_id] = event.data;
    for (auto it = listeners_.begin(); it != listeners_.end();) {
      if (!it->second.devices.count(event.device_id)) {
        ++it;
        continue;
      }
      ++sent_;
      it->second.last_sent_s = now_s;
      it = it->second.sink(event.data) ? std::next(it) : listeners_.erase(it);
    }
  }
}

void PowerFanout::sweep_locked() {
  const double now_s = steady_now_s();
  for (auto it = listeners_.begin(); it != listeners_.end();) {
    Listener& listener = it->second;
    bool keep = !listener.alive || listener.alive();
    if (keep && now_s - listener.last_sent_s >= keepalive_s_) {
      listener.last_sent_s = now_s;
      keep = listener.sink({});
    }
    it = keep ? std::next(it) : listeners_.erase(it);
  }
}

void PowerFanout::run() {
  using Clock = std::chrono::steady_clock;
  const auto period =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(period_s_));
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    wake_.wait(lock, [&] { return stopping_ || !listeners_.empty(); });
    if (stopping_) break;
    polling_ = true;
    log_info("zeusd: " + name_ + " power poller started at " + std::to_string(1.0 / period_s_) +
             " Hz");
    bool restart = true;
    auto due = Clock::now();
    while (!stopping_ && !listeners_.empty()) {
      lock.unlock();
      std::vector<Event> events = poll_(restart);  // device reads, without the fan-out's lock
      lock.lock();
      restart = false;
      ++ticks_;
      deliver_locked(events);
      sweep_locked();
      due += period;
      if (due < Clock::now()) due = Clock::now();  // late: the next tick is now, none made up
      wake_.wait_until(lock, due, [&] { return stopping_; });
    }
    polling_ = false;
    latest_.clear();  // no stale power for the next listener: the restart reads afresh
    log_info("zeusd: " + name_ + " power poller paused (no listener)");
  }
}

}  // namespace zeus::zeusd
