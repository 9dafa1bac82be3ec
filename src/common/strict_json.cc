#include "common/strict_json.h"

#include <optional>
#include <set>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

namespace zeus {
namespace {

using nlohmann::json;

// Field names longer than this, or with control characters, are not echoed in messages.
constexpr size_t kMaxShownFieldBytes = 256;

// "'name'", or "" when the name is not fit to be shown.
std::string shown(const std::string& name) {
  if (name.size() > kMaxShownFieldBytes) return "";
  for (const char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) return "";
  }
  return "'" + name + "'";
}

std::string field_text(const std::string& name) {
  const std::string quoted = shown(name);
  return quoted.empty() ? "field" : "field " + quoted;
}

}  // namespace

std::optional<std::string> parse_json_noting_duplicates(std::string_view text, json& value) {
  // The keys seen in each object being read, innermost last (the parser reports every key).
  std::vector<std::set<std::string>> open;
  std::optional<std::string> duplicate;
  const json::parser_callback_t watch_keys = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      open.emplace_back();
    } else if (event == json::parse_event_t::object_end && !open.empty()) {
      open.pop_back();
    } else if (event == json::parse_event_t::key && !open.empty() && !duplicate &&
               parsed.is_string() && !open.back().insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  value = json::parse(text.begin(), text.end(), watch_keys, /*allow_exceptions=*/false);
  return duplicate;
}

Result<json> parse_strict_json_object(std::string_view text) {
  json value;
  const std::optional<std::string> duplicate = parse_json_noting_duplicates(text, value);
  if (value.is_discarded()) {
    return fail(ErrorCode::kInvalidArgument, "the body is not valid JSON");
  }
  if (!value.is_object()) {
    return fail(ErrorCode::kInvalidArgument, "the body must be a JSON object");
  }
  if (duplicate) {
    return fail(ErrorCode::kInvalidArgument,
                "duplicate " + field_text(*duplicate) + " (each field may appear once)");
  }
  return value;
}

Result<void> check_known_fields(const json& object, std::span<const char* const> fields) {
  for (const auto& item : object.items()) {
    bool known = false;
    for (const char* field : fields) known = known || item.key() == field;
    if (known) continue;
    std::string list;
    for (const char* field : fields) list += std::string(list.empty() ? "" : ", ") + field;
    return fail(ErrorCode::kInvalidArgument,
                "unknown " + field_text(item.key()) +
                    "; the fields are: " + (list.empty() ? "none" : list));
  }
  return ok();
}

}  // namespace zeus
