#include "zeusd/json_answer.h"

#include <nlohmann/json.hpp>

namespace zeus::zeusd {

http::HttpResponse json_answer(int status, const nlohmann::json& body) {
  http::HttpResponse response;
  response.status = status;
  response.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return response;
}

}  // namespace zeus::zeusd
