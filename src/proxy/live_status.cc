#include "proxy/live_status.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace zeus::proxy {

std::string format_status(const ProxyStatus& s) {
  double watts = 0;
  for (double w : s.gpu_power_w) watts += w;
  char per_token[32] = "-";
  if (s.output_tokens > 0) {
    std::snprintf(per_token, sizeof(per_token), "%.3f",
                  s.attributed_j / static_cast<double>(s.output_tokens));
  }
  char line[256];
  std::snprintf(line, sizeof(line),
                "zeus proxy: %lld %s (%lld in flight), %lld %s, %s J/token, %.1f W",
                static_cast<long long>(s.requests), s.requests == 1 ? "request" : "requests",
                static_cast<long long>(s.in_flight), static_cast<long long>(s.output_tokens),
                s.output_tokens == 1 ? "token" : "tokens", per_token, watts);
  return line;
}

LiveStatus::LiveStatus(std::function<ProxyStatus()> read, int fd, double period_s)
    : read_(std::move(read)), fd_(fd), period_s_(period_s) {
  if (isatty(fd_) == 1) thread_ = std::thread([this] { run(); });
}

LiveStatus::~LiveStatus() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  draw();
  [[maybe_unused]] const ssize_t n = ::write(fd_, "\n", 1);
}

void LiveStatus::draw() {
  const std::string text = "\r" + format_status(read_()) + "\x1b[K";
  [[maybe_unused]] const ssize_t n = ::write(fd_, text.data(), text.size());
}

void LiveStatus::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    draw();
    lock.lock();
    wake_.wait_for(lock, std::chrono::duration<double>(period_s_), [this] { return stopping_; });
  }
}

}  // namespace zeus::proxy
