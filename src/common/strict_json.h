// Strict JSON objects, for the request bodies of the project's services (zeus serve, zeusd): a
// body is one JSON object that names no key twice, at any depth, and holds only the fields its
// request knows. A duplicate key would otherwise mean "last one wins" and an unknown one would be
// ignored, so a typo ("max_mz") or a smuggled second value would silently change what is done.
// Messages name the field ("unknown field 'x'; the fields are: a, b", "duplicate field 'x'");
// a field name too long or with control characters is not echoed.
// Thread-safety: pure functions. Failure: InvalidArgument; never throws, for any input.
//
//   Result<nlohmann::json> body = zeus::parse_strict_json_object(request.body);
//   if (body) ok = zeus::check_known_fields(*body, std::array{"power_limit_mw"});
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "zeus/common/result.h"

namespace zeus {

// `text` parsed as any JSON value into `value` (discarded, is_discarded(), when not valid JSON);
// returns the first key that an object names twice (`value` then holds the last one, as nlohmann
// keeps it): for codecs that word their own errors.
std::optional<std::string> parse_json_noting_duplicates(std::string_view text,
                                                        nlohmann::json& value);

// `text` as one JSON object in which no object names a key twice. InvalidArgument: "the body is
// not valid JSON", "the body must be a JSON object", "duplicate field 'x'".
Result<nlohmann::json> parse_strict_json_object(std::string_view text);

// InvalidArgument "unknown field 'x'; the fields are: a, b" when `object` has a key that is not
// one of `fields`.
Result<void> check_known_fields(const nlohmann::json& object, std::span<const char* const> fields);

}  // namespace zeus
