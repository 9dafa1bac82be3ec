// json_answer: the one way zeusd's two route tables (zeusd_service.cc, upstream_routes.cc) turn a
// JSON value into an HTTP answer. Invalid UTF-8 in a message (a device's name, a client's query
// echoed back) is replaced, never thrown.
//
//   return json_answer(200, nlohmann::json{{"power_limit_mw", 300000}});
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "http/message.h"

namespace zeus::zeusd {

http::HttpResponse json_answer(int status, const nlohmann::json& body);

}  // namespace zeus::zeusd
