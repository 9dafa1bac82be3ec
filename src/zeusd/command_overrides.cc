#include "zeusd/command_overrides.h"

#include <sys/stat.h>
#include <unistd.h>
#include <wordexp.h>

#include <array>
#include <fstream>
#include <sstream>
#include <toml++/toml.h>

#include "common/run_command.h"
#include "zeus/common/log.h"

namespace zeus::zeusd {
namespace {

constexpr std::array<GpuOperation, 7> kOperations = {
    GpuOperation::kSetPersistenceMode,  GpuOperation::kSetPowerLimit,
    GpuOperation::kSetGpuLockedClocks,  GpuOperation::kResetGpuLockedClocks,
    GpuOperation::kSetMemLockedClocks,  GpuOperation::kResetMemLockedClocks,
    GpuOperation::kResetLockedClocks,
};

std::vector<std::string_view> placeholders_of(GpuOperation operation) {
  switch (operation) {
    case GpuOperation::kSetPersistenceMode:
      return {"gpu_id", "enabled"};
    case GpuOperation::kSetPowerLimit:
      return {"gpu_id", "power_limit_mw", "power_limit_w"};
    case GpuOperation::kSetGpuLockedClocks:
    case GpuOperation::kSetMemLockedClocks:
      return {"gpu_id", "min_clock_mhz", "max_clock_mhz"};
    default:
      return {"gpu_id"};
  }
}

Error bad(std::string_view source, const std::string& what) {
  return Error{ErrorCode::kInvalidArgument,
               std::string(source) + ": " + what +
                   " (see docs/operators.md, \"GPU command overrides\")"};
}

// Every `{name}` of `word` is one of the operation's placeholders; no stray braces.
Result<void> check_placeholders(GpuOperation operation, const std::string& word,
                                std::string_view source) {
  const auto allowed = placeholders_of(operation);
  for (size_t i = 0; i < word.size(); ++i) {
    if (word[i] == '}') {
      return tl::unexpected(bad(source, std::string("[") + operation_name(operation) +
                                            "]: a '}' without its '{' in '" + word + "'"));
    }
    if (word[i] != '{') continue;
    const size_t end = word.find_first_of("{}", i + 1);
    if (end == std::string::npos || word[end] != '}' || end == i + 1) {
      return tl::unexpected(bad(source, std::string("[") + operation_name(operation) +
                                            "]: an unfinished placeholder in '" + word + "'"));
    }
    const std::string name = word.substr(i + 1, end - i - 1);
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string names;
      for (std::string_view a : allowed) names += (names.empty() ? "{" : ", {") + std::string(a) + "}";
      return tl::unexpected(bad(source, std::string("[") + operation_name(operation) +
                                            "]: unknown placeholder {" + name + "} in '" + word +
                                            "' (this operation has " + names + ")"));
    }
    i = end;
  }
  return ok();
}

std::string substitute(const std::string& word, const OverrideValues& values) {
  auto replace = [](std::string text, std::string_view key, const std::string& value) {
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size())) {
      text.replace(at, key.size(), value);
    }
    return text;
  };
  std::string out = replace(word, "{gpu_id}", std::to_string(values.gpu_id));
  if (values.enabled) out = replace(out, "{enabled}", *values.enabled ? "1" : "0");
  if (values.power_limit_mw) {
    out = replace(out, "{power_limit_mw}", std::to_string(*values.power_limit_mw));
    out = replace(out, "{power_limit_w}", std::to_string(*values.power_limit_mw / 1000));
  }
  if (values.min_clock_mhz) out = replace(out, "{min_clock_mhz}", std::to_string(*values.min_clock_mhz));
  if (values.max_clock_mhz) out = replace(out, "{max_clock_mhz}", std::to_string(*values.max_clock_mhz));
  return out;
}

// Trims output quoted in a message.
std::string excerpt(const std::string& text) {
  constexpr size_t kMax = 2000;
  return text.size() <= kMax ? text : text.substr(0, kMax) + "...";
}

}  // namespace

const char* operation_name(GpuOperation operation) {
  switch (operation) {
    case GpuOperation::kSetPersistenceMode:
      return "set_persistence_mode";
    case GpuOperation::kSetPowerLimit:
      return "set_power_limit";
    case GpuOperation::kSetGpuLockedClocks:
      return "set_gpu_locked_clocks";
    case GpuOperation::kResetGpuLockedClocks:
      return "reset_gpu_locked_clocks";
    case GpuOperation::kSetMemLockedClocks:
      return "set_mem_locked_clocks";
    case GpuOperation::kResetMemLockedClocks:
      return "reset_mem_locked_clocks";
    case GpuOperation::kResetLockedClocks:
      return "reset_locked_clocks";
  }
  return "?";
}

Result<std::vector<std::string>> split_command(const std::string& command) {
  // wordexp would expand these (variables, globs, home folders): a command is run as written.
  const size_t special = command.find_first_of("$`*?[~");
  if (special != std::string::npos) {
    return fail(ErrorCode::kInvalidArgument,
                std::string("the command '") + command + "' has '" + command[special] +
                    "', which needs a shell; put it in a wrapper script");
  }
  // glibc's wordexp refuses braces, which placeholders use: hide them from it.
  std::string hidden = command;
  for (char& c : hidden) {
    if (c == '{') c = '\x01';
    if (c == '}') c = '\x02';
  }
  wordexp_t words{};
  const int status = wordexp(hidden.c_str(), &words, WRDE_NOCMD | WRDE_UNDEF);
  if (status != 0) {
    if (status == WRDE_NOSPACE) wordfree(&words);
    const char* why = status == WRDE_BADCHAR
                          ? "has a character that needs a shell (| & ; < > ( ) or a newline); put "
                            "it in a wrapper script"
                          : "cannot be split into words (an unclosed quote?)";
    return fail(ErrorCode::kInvalidArgument, "the command '" + command + "' " + why);
  }
  std::vector<std::string> out(words.we_wordv, words.we_wordv + words.we_wordc);
  wordfree(&words);
  for (std::string& word : out) {
    for (char& c : word) {
      if (c == '\x01') c = '{';
      if (c == '\x02') c = '}';
    }
  }
  if (out.empty()) return fail(ErrorCode::kInvalidArgument, "an empty command");
  return out;
}

Result<CommandOverrides> CommandOverrides::parse(std::string_view text, std::string_view source) {
  toml::table table;
  try {
    table = toml::parse(text, source);
  } catch (const toml::parse_error& error) {
    return tl::unexpected(bad(source, "line " + std::to_string(error.source().begin.line) + ": " +
                                          std::string(error.description())));
  }
  CommandOverrides overrides;
  for (const auto& [key, node] : table) {
    // A structured binding is not captured by a lambda in clang 14 (the fuzz build's compiler).
    const std::string_view name = key.str();
    auto known = std::find_if(kOperations.begin(), kOperations.end(),
                              [&](GpuOperation o) { return name == operation_name(o); });
    if (known == kOperations.end()) {
      return tl::unexpected(bad(source, "unknown operation [" + std::string(key.str()) +
                                            "]; the operations are set_persistence_mode, "
                                            "set_power_limit, set_gpu_locked_clocks, "
                                            "reset_gpu_locked_clocks, set_mem_locked_clocks, "
                                            "reset_mem_locked_clocks, reset_locked_clocks"));
    }
    const GpuOperation operation = *known;
    const std::string where = std::string("[") + operation_name(operation) + "]";
    const toml::table* spec_table = node.as_table();
    if (!spec_table) return tl::unexpected(bad(source, where + " must be a table"));
    Spec spec;
    bool has_commands = false;
    for (const auto& [field, value] : *spec_table) {
      if (field.str() == "commands") {
        const toml::array* array = value.as_array();
        if (!array || array->empty()) {
          return tl::unexpected(bad(source, where + ": commands must be a non-empty array of strings"));
        }
        for (const toml::node& item : *array) {
          const auto* line = item.as_string();
          if (!line) return tl::unexpected(bad(source, where + ": commands must be strings"));
          auto words = split_command(line->get());
          if (!words) return tl::unexpected(bad(source, where + ": " + words.error().message));
          for (const std::string& word : *words) ZEUS_TRY(check_placeholders(operation, word, source));
          spec.commands.push_back(std::move(*words));
        }
        has_commands = true;
      } else if (field.str() == "error_pattern") {
        const auto* pattern = value.as_string();
        if (!pattern) return tl::unexpected(bad(source, where + ": error_pattern must be a string"));
        auto compiled = OutputPattern::compile(pattern->get());
        if (!compiled) {
          return tl::unexpected(bad(source, std::string("[") + operation_name(operation) +
                                                "]: error_pattern is not a valid regular "
                                                "expression: " +
                                                compiled.error().message));
        }
        spec.error_pattern = std::move(*compiled);
      } else if (field.str() == "timeout_s") {
        const auto* seconds = value.as_integer();
        if (!seconds || seconds->get() <= 0 || seconds->get() > 86400) {
          return tl::unexpected(bad(source, where + ": timeout_s must be a whole number of seconds "
                                                    "from 1 to 86400"));
        }
        spec.timeout = std::chrono::seconds(seconds->get());
      } else {
        return tl::unexpected(bad(source, where + ": unknown key '" + std::string(field.str()) +
                                              "' (keys: commands, error_pattern, timeout_s)"));
      }
    }
    if (!has_commands) return tl::unexpected(bad(source, where + " has no commands"));
    overrides.specs_[operation] = std::move(spec);
  }
  return overrides;
}

Result<CommandOverrides> CommandOverrides::load(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    return fail(ErrorCode::kNotFound, "GPU command override file " + path + ": " +
                                          std::strerror(errno));
  }
  const uid_t me = geteuid();
  if (info.st_uid != 0 && info.st_uid != me) {
    return fail(ErrorCode::kInvalidArgument,
                "GPU command override file " + path + " is owned by uid " +
                    std::to_string(info.st_uid) + "; it must be owned by root or zeusd's user (uid " +
                    std::to_string(me) + "), because zeusd runs the commands it names");
  }
  if (info.st_mode & S_IWOTH) {
    std::ostringstream mode;
    mode << std::oct << (info.st_mode & 0777);
    return fail(ErrorCode::kInvalidArgument,
                "GPU command override file " + path + " is world-writable (mode " + mode.str() +
                    "); zeusd runs the commands it names: chmod o-w " + path);
  }
  if (info.st_mode & S_IWGRP) {
    log_warning("zeusd: GPU command override file " + path +
                " is group-writable: anyone in its group can change the commands zeusd runs");
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return fail(ErrorCode::kNotFound, "cannot read GPU command override file " + path);
  return parse(text.str(), path);
}

std::vector<std::string> CommandOverrides::operation_names() const {
  std::vector<std::string> names;
  for (GpuOperation operation : kOperations) {
    if (has(operation)) names.emplace_back(operation_name(operation));
  }
  return names;
}

Result<void> CommandOverrides::run(GpuOperation operation, const OverrideValues& values) const {
  const auto found = specs_.find(operation);
  if (found == specs_.end()) {
    return fail(ErrorCode::kInternal,
                std::string("no command override for ") + operation_name(operation));
  }
  const Spec& spec = found->second;
  for (const std::vector<std::string>& words : spec.commands) {
    std::vector<std::string> argv;
    for (const std::string& word : words) argv.push_back(substitute(word, values));
    RunCommandOptions options;
    options.timeout = spec.timeout;
    auto outcome = run_command(argv, options);
    if (!outcome) return tl::unexpected(outcome.error());
    std::string failure;
    if (!outcome->succeeded()) {
      failure = outcome->describe(spec.timeout);
    } else if (spec.error_pattern) {
      if (!outcome->output_complete) {
        failure = "succeeded, but its output was still open after it ended, so error_pattern "
                  "could not be checked";
      } else if (spec.error_pattern->matches(outcome->stdout_text + outcome->stderr_text)) {
        failure = "succeeded but its output matched error_pattern '" +
                  spec.error_pattern->text() + "'";
      }
    }
    log_info("zeusd: GPU " + std::to_string(values.gpu_id) + " " + operation_name(operation) +
             ": '" + outcome->command_line + "' " + (failure.empty() ? "succeeded" : failure));
    if (!failure.empty()) {
      return fail(ErrorCode::kInternal, "command '" + outcome->command_line + "' " + failure +
                                            "; stdout: " + excerpt(outcome->stdout_text) +
                                            "; stderr: " + excerpt(outcome->stderr_text));
    }
  }
  return ok();
}

}  // namespace zeus::zeusd
