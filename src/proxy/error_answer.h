// The errors zeus proxy answers itself (the upstream did not answer or broke off, a body over
// the limit, a malformed request, a connection refused at the cap) in the shape of OpenAI's API,
//   {"error": {"message": M, "type": T, "param": null, "code": null}, "message": M}
// OpenAI's client libraries read "error" (the Node one says only "502 status code (no body)"
// without it); "message" at the top is the shape of every other server of the project, and of
// older vLLM versions. T: "invalid_request_error" for 4xx, "server_error" for 5xx. Answers the
// upstream gives are relayed unchanged, whatever their shape.
#pragma once

#include <string_view>

#include "http/message.h"

namespace zeus::proxy {

http::HttpResponse openai_error(int status, std::string_view message);

}  // namespace zeus::proxy
