// What the proxy reads of a request body: the top-level "model" and "stream" of a JSON object,
// nothing else. nlohmann's SAX parser checks the whole body (a malformed one yields nothing) but
// builds no value: nested messages are lexed and skipped, not stored.
// The rules are those of a parsed document read with body["model"] / body["stream"]: the last
// occurrence of a key wins; "model" counts only as a string, "stream" only as the literal true;
// a body that is not a JSON object, or not valid JSON, has neither.
// Pure: text in, fields out.
//
//   RequestFields f = read_request_fields(R"({"model": "m", "stream": true, "messages": []})");
//   // f.model == "m", f.stream == true
#pragma once

#include <string>
#include <string_view>

namespace zeus::proxy {

struct RequestFields {
  std::string model;    // "" when absent or not a string
  bool stream = false;  // "stream": true
};

RequestFields read_request_fields(std::string_view body);

}  // namespace zeus::proxy
