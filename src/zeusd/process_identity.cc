#include "zeusd/process_identity.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

namespace zeus::zeusd {
namespace {

std::optional<std::string> read_small_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

}  // namespace

std::optional<uint64_t> parse_stat_start_ticks(std::string_view stat_text) {
  const size_t close = stat_text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  // After "pid (comm)" come field 3 (state) ... field 22 (starttime): skip 19 fields.
  std::string_view rest = stat_text.substr(close + 1);
  for (int field = 3; field <= 22; ++field) {
    const size_t start = rest.find_first_not_of(' ');
    if (start == std::string_view::npos) return std::nullopt;
    rest = rest.substr(start);
    const size_t end = std::min(rest.find(' '), rest.size());
    if (field == 22) {
      uint64_t ticks = 0;
      const auto [ptr, error] = std::from_chars(rest.data(), rest.data() + end, ticks);
      if (error != std::errc() || ptr != rest.data() + end) return std::nullopt;
      return ticks;
    }
    rest = rest.substr(end);
  }
  return std::nullopt;
}

std::optional<uint64_t> process_start_ticks(int pid, const std::string& proc_root) {
  if (pid <= 0) return std::nullopt;
  auto text = read_small_file(proc_root + "/" + std::to_string(pid) + "/stat");
  if (!text) return std::nullopt;
  return parse_stat_start_ticks(*text);
}

std::string current_boot_id(const std::string& proc_root) {
  auto text = read_small_file(proc_root + "/sys/kernel/random/boot_id");
  if (!text) return "";
  while (!text->empty() && (text->back() == '\n' || text->back() == ' ')) text->pop_back();
  return *text;
}

}  // namespace zeus::zeusd
