// Strict JSON objects (common/strict_json.h), the request bodies of zeus serve and zeusd:
// duplicate keys at any depth and unknown fields are refused by name.
#include "common/strict_json.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <nlohmann/json.hpp>

namespace zeus {
namespace {

void expect_invalid(const Error& error, const std::string& message) {
  EXPECT_EQ(error.code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(error.message, message);
}

TEST(StrictJsonTest, AnObjectWithEachKeyOnceIsParsed) {
  auto parsed = parse_strict_json_object(R"({"a": 1, "b": {"a": 2, "c": [{"a": 3}, {"a": 4}]}})");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().to_string();
  EXPECT_EQ((*parsed)["b"]["c"][1]["a"], 4);
  EXPECT_TRUE(parse_strict_json_object("{}").has_value());
}

TEST(StrictJsonTest, DuplicateKeysAreRefusedAtAnyDepth) {
  expect_invalid(parse_strict_json_object(R"({"a": 1, "a": 2})").error(),
                 "duplicate field 'a' (each field may appear once)");
  expect_invalid(parse_strict_json_object(R"({"a": {"b": 1, "c": 2, "b": 3}})").error(),
                 "duplicate field 'b' (each field may appear once)");
  expect_invalid(parse_strict_json_object(R"({"a": [{"x": 1}, {"y": 1, "y": 1}]})").error(),
                 "duplicate field 'y' (each field may appear once)");
  // "\u0061" is "a": the same key, however it is spelled.
  expect_invalid(parse_strict_json_object(R"({"a": 1, "\u0061": 2})").error(),
                 "duplicate field 'a' (each field may appear once)");
  // A key with a control character is not echoed.
  expect_invalid(parse_strict_json_object(R"({"a\u0001": 1, "a\u0001": 2})").error(),
                 "duplicate field (each field may appear once)");
}

TEST(StrictJsonTest, NotJsonOrNotAnObjectIsRefused) {
  for (const char* text : {"", "{", "[1]", "null", "\"x\"", "{\"a\": 1} trailing"}) {
    auto parsed = parse_strict_json_object(text);
    ASSERT_FALSE(parsed.has_value()) << text;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
  }
  expect_invalid(parse_strict_json_object("[1]").error(), "the body must be a JSON object");
  expect_invalid(parse_strict_json_object("{").error(), "the body is not valid JSON");
  // Deep nesting and invalid UTF-8 are errors, never crashes.
  EXPECT_FALSE(parse_strict_json_object(std::string(100000, '{')).has_value());
  EXPECT_FALSE(parse_strict_json_object("{\"\xff\": 1}").has_value());
}

TEST(StrictJsonTest, UnknownFieldsAreNamedWithTheKnownOnes) {
  constexpr std::array kFields = {"min_mhz", "max_mhz"};
  auto object = parse_strict_json_object(R"({"min_mhz": 1, "max_mz": 2})");
  ASSERT_TRUE(object.has_value());
  expect_invalid(check_known_fields(*object, kFields).error(),
                 "unknown field 'max_mz'; the fields are: min_mhz, max_mhz");
  EXPECT_TRUE(check_known_fields(nlohmann::json{{"max_mhz", 1}}, kFields).has_value());
  expect_invalid(check_known_fields(nlohmann::json{{"x", 1}}, {}).error(),
                 "unknown field 'x'; the fields are: none");
  expect_invalid(check_known_fields(nlohmann::json{{std::string(300, 'k'), 1}}, kFields).error(),
                 "unknown field; the fields are: min_mhz, max_mhz");
}

}  // namespace
}  // namespace zeus
