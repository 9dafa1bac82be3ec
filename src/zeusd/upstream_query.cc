#include "zeusd/upstream_query.h"

#include <algorithm>
#include <charconv>
#include <set>

#include <boost/algorithm/string/classification.hpp>
#include <boost/algorithm/string/split.hpp>
#include <boost/algorithm/string/trim.hpp>

namespace zeus::zeusd {
namespace {

std::string ids_name(std::string_view device) { return device == "CPU" ? "cpu_ids" : "gpu_ids"; }

// A decimal without sign or spaces that fits `T`.
template <typename T>
bool parse_decimal(std::string_view text, T* out) {
  if (text.empty() || text.size() > 20) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size();
}

// What the client sent, cut short, for a message.
std::string shown(std::string_view text) {
  return text.size() > 40 ? std::string(text.substr(0, 40)) + "..." : std::string(text);
}

}  // namespace

Result<std::vector<int>> parse_device_ids(std::string_view raw, std::string_view device) {
  const std::string param = ids_name(device);
  if (boost::algorithm::trim_copy(std::string(raw)).empty()) {
    return fail(ErrorCode::kInvalidArgument,
                param + " must contain at least one " + std::string(device) + " index");
  }
  std::vector<std::string> parts;
  boost::algorithm::split(parts, raw, boost::algorithm::is_any_of(","));
  std::vector<int> ids;
  for (std::string& part : parts) {
    boost::algorithm::trim(part);
    if (part.empty()) {
      return fail(ErrorCode::kInvalidArgument, param + " contains an empty " + std::string(device) +
                                                   " index (write e.g. " + param + "=0,1)");
    }
    unsigned int id = 0;
    if (!parse_decimal(part, &id) || id > 1'000'000) {
      return fail(ErrorCode::kInvalidArgument,
                  "Invalid " + std::string(device) + " index: " + shown(part) +
                      " (a non-negative decimal, e.g. " + param + "=0,1)");
    }
    ids.push_back(static_cast<int>(id));
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

Result<ParsedQuery> parse_query(const QueryPairs& query, const QuerySpec& spec,
                                size_t device_count) {
  const std::string ids_param = ids_name(spec.device);
  std::set<std::string> known{ids_param};
  if (spec.block) known.insert("block");
  known.insert(spec.numbers.begin(), spec.numbers.end());
  known.insert(spec.flags.begin(), spec.flags.end());
  auto known_list = [&] {
    std::string list;
    for (const std::string& name : known) list += (list.empty() ? "" : ", ") + name;
    return list;
  };

  std::map<std::string, std::string> values;
  for (const auto& [name, value] : query) {
    if (!known.count(name)) {
      return fail(ErrorCode::kInvalidArgument, "unknown query parameter '" + shown(name) +
                                                   "' (this route takes " + known_list() + ")");
    }
    if (!values.emplace(name, value).second) {
      return fail(ErrorCode::kInvalidArgument,
                  "query parameter '" + name + "' is given twice (give it once)");
    }
  }

  ParsedQuery parsed;
  if (auto it = values.find(ids_param); it != values.end()) {
    auto ids = parse_device_ids(it->second, spec.device);
    if (!ids) return fail(ids.error());
    for (int id : *ids) {
      if (static_cast<size_t>(id) >= device_count) {
        return fail(ErrorCode::kNotFound, spec.device + " " + std::to_string(id) + " not found");
      }
    }
    parsed.ids = std::move(*ids);
  } else if (spec.ids_required) {
    return fail(ErrorCode::kInvalidArgument,
                "missing query parameter " + ids_param + " (e.g. " + ids_param + "=0,1)");
  } else {
    for (size_t i = 0; i < device_count; ++i) parsed.ids.push_back(static_cast<int>(i));
  }

  auto flag = [&](const std::string& name) -> Result<bool> {
    auto it = values.find(name);
    if (it == values.end()) {
      return fail(ErrorCode::kInvalidArgument,
                  "missing query parameter " + name + " (" + name + "=true or " + name + "=false)");
    }
    if (it->second == "true") return true;
    if (it->second == "false") return false;
    return fail(ErrorCode::kInvalidArgument,
                "query parameter " + name + "='" + shown(it->second) + "' must be true or false");
  };
  for (const std::string& name : spec.flags) {
    auto value = flag(name);
    if (!value) return fail(value.error());
    parsed.flags[name] = *value;
  }
  if (spec.block) {
    auto value = flag("block");
    if (!value) return fail(value.error());
    parsed.block = *value;
  }
  for (const std::string& name : spec.numbers) {
    auto it = values.find(name);
    if (it == values.end()) {
      return fail(ErrorCode::kInvalidArgument, "missing query parameter " + name);
    }
    uint32_t number = 0;
    if (!parse_decimal(it->second, &number)) {
      return fail(ErrorCode::kInvalidArgument, "query parameter " + name + "='" +
                                                   shown(it->second) +
                                                   "' must be a non-negative integer below 2^32");
    }
    parsed.numbers[name] = number;
  }
  return parsed;
}

}  // namespace zeus::zeusd
