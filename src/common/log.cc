#include "zeus/common/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace zeus {
namespace {

LogLevel initial_level() {
  LogLevel level = LogLevel::kWarning;
  if (const char* env = std::getenv("ZEUS_LOG_LEVEL")) parse_log_level(env, &level);
  return level;
}

std::atomic<int>& level_storage() {
  static std::atomic<int> level{static_cast<int>(initial_level())};
  return level;
}

std::mutex& sink_mutex() {
  static std::mutex mutex;
  return mutex;
}

LogSink& sink_storage() {
  static LogSink sink;
  return sink;
}

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
    case LogLevel::kOff:
      return "off";
  }
  return "?";
}

}  // namespace

void set_log_level(LogLevel level) { level_storage().store(static_cast<int>(level)); }

LogLevel log_level() { return static_cast<LogLevel>(level_storage().load()); }

bool parse_log_level(std::string_view text, LogLevel* out) {
  for (LogLevel level : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarning, LogLevel::kError,
                         LogLevel::kOff}) {
    if (text == level_name(level)) {
      *out = level;
      return true;
    }
  }
  return false;
}

void set_log_sink(LogSink sink) {
  std::lock_guard<std::mutex> lock(sink_mutex());
  sink_storage() = std::move(sink);
}

void log(LogLevel level, std::string_view message) {
  if (static_cast<int>(level) < level_storage().load()) return;
  std::lock_guard<std::mutex> lock(sink_mutex());
  if (sink_storage()) {
    sink_storage()(level, message);
    return;
  }
  // A message that names its component ("zeusd: ...", "zeus proxy: ...") is printed as
  // "zeusd info: ...", never "zeus info: zeusd: ...".
  std::string_view component = "zeus";
  const size_t colon = message.find(": ");
  if (colon != std::string_view::npos && colon <= 24 && message.substr(0, 4) == "zeus" &&
      message.substr(0, colon).find_first_not_of("abcdefghijklmnopqrstuvwxyz ") ==
          std::string_view::npos) {
    component = message.substr(0, colon);
    message.remove_prefix(colon + 2);
  }
  std::fprintf(stderr, "%.*s %s: %.*s\n", static_cast<int>(component.size()), component.data(),
               level_name(level), static_cast<int>(message.size()), message.data());
}

}  // namespace zeus
