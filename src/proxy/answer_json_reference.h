// Test helper (answer_json_test.cc, fuzz/proxy_answer_fuzz.cc): read_answer_json's reference —
// the reader it replaced, on the parsed document (nlohmann/json, in answer_json_reference.cc) —
// to compare the SAX handler with. Answers the chunks that produced text, and fills the same
// outputs as read_answer_json.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "proxy/answer_json.h"

namespace zeus::proxy::reference {

int64_t reference_read(std::string_view json_text, Usage* usage, std::string* model,
                       std::string* id, std::string* text);

}  // namespace zeus::proxy::reference
