#include "zeusd/json_answer.h"

#include <nlohmann/json.hpp>

namespace zeus::zeusd {

http::HttpResponse json_answer(int status, const nlohmann::json& body) {
  http::HttpResponse response;
  response.status = status;
  response.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return response;
}

http::HttpResponse error_answer(int status, const std::string& message) {
  return json_answer(status, nlohmann::json{{"error", message}});
}

http::HttpResponse message_answer(int status, const std::string& message) {
  return json_answer(status, nlohmann::json{{"message", message}});
}

http::HttpResponse empty_answer(int status) {
  http::HttpResponse response;
  response.status = status;
  response.content_type.clear();
  return response;
}

}  // namespace zeus::zeusd
