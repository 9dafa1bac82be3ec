// JSON text helpers of the server: dumping that never throws, and the error body.
//
// dump_json replaces invalid UTF-8 (which nlohmann would refuse with an exception) with U+FFFD,
// so a message quoting raw client input can always be sent. Thread-safety: pure functions.
//
//   res.body = dump_json(j);
//   res.body = error_json("unknown job 'x'");   // {"message":"unknown job 'x'"}
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace zeus::server {

// Compact JSON text of j; never throws.
std::string dump_json(const nlohmann::json& j);

// {"message": message}, the body of every error answer (docs/server.md).
std::string error_json(const std::string& message);

}  // namespace zeus::server
