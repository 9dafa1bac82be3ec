// dump_json and error_json (server/json_text.h).
#include "server/json_text.h"

#include <nlohmann/json.hpp>

namespace zeus::server {

std::string dump_json(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string error_json(const std::string& message) {
  return dump_json(nlohmann::json{{"message", message}});
}

}  // namespace zeus::server
