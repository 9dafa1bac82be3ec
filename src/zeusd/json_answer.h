// json_answer: the one way zeusd's routes (zeusd_routes.cc and the handlers it calls) turn a JSON
// value into an HTTP answer, and zeusd's two error shapes: {"error": ...} on upstream's routes and
// the request gate's answers, {"message": ...} on ours (/discover, /leases, /lease_session, the
// removed routes). Invalid UTF-8 in a message (a device's name, a client's query echoed back) is
// replaced, never thrown.
//
//   return json_answer(200, nlohmann::json{{"power_limit_mw", 300000}});
//   return error_answer(400, "GPU 3 not found");  // {"error": "GPU 3 not found"}
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "http/message.h"

namespace zeus::zeusd {

http::HttpResponse json_answer(int status, const nlohmann::json& body);
// {"error": message}: upstream's shape.
http::HttpResponse error_answer(int status, const std::string& message);
// {"message": message}: the shape of zeusd's own routes.
http::HttpResponse message_answer(int status, const std::string& message);
// `status` with an empty body (upstream's writes' 200, and its 404 for an unknown route).
http::HttpResponse empty_answer(int status);

}  // namespace zeus::zeusd
