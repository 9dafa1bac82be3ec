// Logging: one line per message on stderr (or a sink the program installs), filtered by level.
//
// The level comes from ZEUS_LOG_LEVEL (debug|info|warning|error; default warning) unless the
// program sets it. Thread-safety: all functions may be called from any thread.
//
//   zeus::log_warning("window 'x' read 0 J: shorter than the counter's update period");
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace zeus {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

// Messages below this level are dropped.
void set_log_level(LogLevel level);
LogLevel log_level();
// Parses "debug", "info", "warning", "error", "off"; false on anything else.
bool parse_log_level(std::string_view text, LogLevel* out);

// Replaces where messages go (default: "zeus <level>: message" on stderr). nullptr restores it.
using LogSink = std::function<void(LogLevel, std::string_view)>;
void set_log_sink(LogSink sink);

void log(LogLevel level, std::string_view message);
inline void log_debug(std::string_view m) { log(LogLevel::kDebug, m); }
inline void log_info(std::string_view m) { log(LogLevel::kInfo, m); }
inline void log_warning(std::string_view m) { log(LogLevel::kWarning, m); }
inline void log_error(std::string_view m) { log(LogLevel::kError, m); }

}  // namespace zeus
