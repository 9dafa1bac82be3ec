// The proxy's one-line live status on a terminal: requests, tokens, J/token, W, rewritten in
// place ("\r" then the line, then erase-to-end) every period, only when the file descriptor is a
// terminal (a log file or a pipe gets nothing). format_status() is pure.
// Thread-safety: LiveStatus runs its own thread; construct and destroy from one thread.
//
//   LiveStatus line([&] { return proxy->status(); }, STDERR_FILENO, 0.5);
//   ...  // the line ends (a newline) when `line` goes
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "proxy/proxy.h"

namespace zeus::proxy {

// "zeus proxy: 120 requests (3 in flight), 4500 tokens, 0.215 J/token, 312.4 W"
// (J/token: attributed energy over output tokens, "-" before the first token; W: the GPUs' sum).
std::string format_status(const ProxyStatus& status);

class LiveStatus {
 public:
  LiveStatus(std::function<ProxyStatus()> read, int fd, double period_s);
  ~LiveStatus();
  LiveStatus(const LiveStatus&) = delete;
  LiveStatus& operator=(const LiveStatus&) = delete;
  bool active() const { return thread_.joinable(); }  // fd is a terminal

 private:
  void run();
  void draw();

  std::function<ProxyStatus()> read_;
  const int fd_;
  const double period_s_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace zeus::proxy
