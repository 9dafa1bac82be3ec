#include "zeusd/config_file.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <toml++/toml.h>

namespace zeus::zeusd {
namespace {

struct Key {
  const char* name;
  bool list;     // an array of strings (repeatable option)
  bool integer;  // a whole number is accepted (and written as one)
};

constexpr Key kKeys[] = {
    {"socket", false, false},      {"socket-owner", false, true},
    {"socket-group", false, true}, {"socket-mode", false, true},
    {"tcp", false, true},          {"allow", true, false},
    {"nvml-path", false, false},   {"powercap-root", false, false},
    {"log-level", false, false},   {"max-connections", false, true},
    {"max-connections-per-user", false, true}, {"request-timeout", false, true},
    {"idle-timeout", false, true}, {"lease-journal", false, false},
    {"lease-session-timeout", false, true}, {"upstream-changes", false, false},
    // upstream zeusd's names (zeusd serve --help)
    {"mode", false, false},        {"socket-path", false, false},
    {"socket-permissions", false, true}, {"socket-uid", false, true},
    {"socket-gid", false, true},   {"tcp-bind-address", false, false},
    {"enable", true, false},       {"gpu-power-poll-hz", false, true},
    {"cpu-power-poll-hz", false, true}, {"signing-key-path", false, false},
    {"gpu-command-overrides", false, false},
};

std::string at(std::string_view source, const toml::source_region& where) {
  return std::string(source) + " line " + std::to_string(where.begin.line);
}

std::string known_keys() {
  std::string out;
  for (const Key& key : kKeys) out += std::string(out.empty() ? "" : ", ") + key.name;
  return out;
}

// A scalar as the option's text: strings as they are, whole numbers where the option takes one.
Result<std::string> scalar(const toml::node& node, const Key& key, std::string_view source) {
  if (const auto* text = node.as_string()) return text->get();
  if (const auto* number = node.as_integer(); number != nullptr && key.integer) {
    return std::to_string(number->get());
  }
  return fail(ErrorCode::kInvalidArgument,
              at(source, node.source()) + ": " + key.name + " must be " +
                  (key.integer ? "a string or a whole number" : "a string") +
                  (key.list ? " (or an array of them)" : ""));
}

}  // namespace

Result<std::vector<std::string>> config_arguments(std::string_view text, std::string_view source) {
  toml::table table;
  try {
    table = toml::parse(text, source);
  } catch (const toml::parse_error& error) {
    return fail(ErrorCode::kInvalidArgument,
                at(source, error.source()) +
                    ": not valid TOML: " + std::string(error.description()) +
                    " (zeusd's config is TOML: key = \"value\" lines)");
  }
  // In file order, so that repeated options keep the operator's order.
  std::vector<std::pair<const toml::key*, const toml::node*>> entries;
  for (const auto& [name, node] : table) entries.emplace_back(&name, &node);
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return a.first->source().begin.line < b.first->source().begin.line;
  });
  std::vector<std::string> args;
  for (const auto& [name, node] : entries) {
    std::string key_name(name->str());
    std::replace(key_name.begin(), key_name.end(), '_', '-');
    const Key* key = nullptr;
    for (const Key& k : kKeys) {
      if (key_name == k.name) key = &k;
    }
    if (node->is_table()) {
      return fail(ErrorCode::kInvalidArgument,
                  at(source, name->source()) + ": [" + std::string(name->str()) +
                      "] sections are not used: write the keys at the top level (" + known_keys() +
                      ")");
    }
    if (key == nullptr) {
      return fail(ErrorCode::kInvalidArgument, at(source, name->source()) + ": unknown key '" +
                                                   std::string(name->str()) +
                                                   "' (known: " + known_keys() + ")");
    }
    if (const auto* array = node->as_array()) {
      if (!key->list) {
        return fail(ErrorCode::kInvalidArgument, at(source, node->source()) + ": " + key->name +
                                                     " takes one value, not an array");
      }
      for (const toml::node& item : *array) {
        auto value = scalar(item, *key, source);
        if (!value) return fail(value.error());
        args.push_back(std::string("--") + key->name);
        args.push_back(*value);
      }
      continue;
    }
    auto value = scalar(*node, *key, source);
    if (!value) return fail(value.error());
    args.push_back(std::string("--") + key->name);
    args.push_back(*value);
  }
  return args;
}

Result<std::vector<std::string>> config_file_arguments(const std::string& path) {
  std::ifstream in(path);
  if (!in) return fail(ErrorCode::kNotFound, "cannot read --config " + path);
  std::stringstream text;
  text << in.rdbuf();
  return config_arguments(text.str(), path);
}

}  // namespace zeus::zeusd
