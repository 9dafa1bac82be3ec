#include "proxy/error_answer.h"

#include <nlohmann/json.hpp>

namespace zeus::proxy {

http::HttpResponse openai_error(int status, std::string_view message) {
  const nlohmann::json text = message;
  const nlohmann::json body = {
      {"error",
       {{"message", text},
        {"type", status >= 500 ? "server_error" : "invalid_request_error"},
        {"param", nullptr},
        {"code", nullptr}}},
      {"message", text}};
  http::HttpResponse answer;
  answer.status = status;
  answer.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return answer;
}

}  // namespace zeus::proxy
