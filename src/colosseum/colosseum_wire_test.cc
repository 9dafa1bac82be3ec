#include "colosseum/colosseum_wire.h"

#include <gtest/gtest.h>

namespace zeus::proxy {
namespace {

std::string message_of(const Error& e) { return e.message; }

TEST(ColosseumWireTest, TheOriginalsBodiesDecode) {
  auto prompt = decode_prompt(
      R"({"request_id": "r1", "prompt": "Why?", "model_index": 1, "model_preference": "any"})",
      100);
  ASSERT_TRUE(prompt) << prompt.error().message;
  EXPECT_EQ(prompt->request_id, "r1");
  EXPECT_EQ(prompt->prompt, "Why?");
  EXPECT_EQ(prompt->model_index, 1);
  auto vote = decode_response_vote(R"({"request_id": "r1", "victory_index": 0})");
  ASSERT_TRUE(vote);
  EXPECT_EQ(vote->victory_index, 0);
  auto worth = decode_energy_vote(R"({"request_id": "r1", "is_worth": true})");
  ASSERT_TRUE(worth);
  EXPECT_TRUE(worth->is_worth);
}

TEST(ColosseumWireTest, BadBodiesNameTheField) {
  const auto refused = [](auto result, const std::string& part) {
    ASSERT_FALSE(result) << part;
    EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(message_of(result.error()).find(part), std::string::npos)
        << message_of(result.error());
  };
  refused(decode_prompt("[1]", 100), "JSON object");
  refused(decode_prompt("{", 100), "JSON object");
  refused(decode_prompt(R"({"prompt": "x", "model_index": 0})", 100), "request_id");
  refused(decode_prompt(R"({"request_id": "", "prompt": "x", "model_index": 0})", 100), "1 to 128");
  refused(decode_prompt(R"({"request_id": "a\nb", "prompt": "x", "model_index": 0})", 100),
          "control characters");
  refused(decode_prompt(R"({"request_id": "r", "prompt": "", "model_index": 0})", 100), "prompt");
  refused(decode_prompt(R"({"request_id": "r", "prompt": "xxxx", "model_index": 0})", 3),
          "over 3 bytes");
  refused(decode_prompt(R"({"request_id": "r", "prompt": "x", "model_index": 1.5})", 100),
          "model_index must be 0 or 1");
  refused(decode_prompt(R"({"request_id": "r", "prompt": "x", "model_index": 0, "n": 2})", 100),
          "unknown field 'n'");
  refused(decode_response_vote(R"({"request_id": "r", "victory_index": -1})"), "victory_index");
  refused(decode_energy_vote(R"({"request_id": "r", "is_worth": 1})"), "true or false");
}

}  // namespace
}  // namespace zeus::proxy
