// The proxy's own errors in OpenAI's shape, with the message also at the top level.
#include "proxy/error_answer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

namespace zeus::proxy {
namespace {

TEST(OpenAiErrorTest, CarriesTheMessageWhereOpenAisClientsAndTheProjectsToolsLook) {
  const http::HttpResponse down = openai_error(502, "zeus proxy: the upstream \"a\" is down");
  EXPECT_EQ(down.status, 502);
  EXPECT_EQ(down.content_type, "application/json");
  const auto body = nlohmann::json::parse(down.body);
  const std::string text = "zeus proxy: the upstream \"a\" is down";
  EXPECT_EQ(body, (nlohmann::json{
                      {"error",
                       {{"message", text}, {"type", "server_error"}, {"param", nullptr},
                        {"code", nullptr}}},
                      {"message", text}}));
  EXPECT_EQ(nlohmann::json::parse(openai_error(413, "too big").body)["error"]["type"],
            "invalid_request_error");
  // A message with bytes that are not UTF-8 (an upstream's error text) still gives valid JSON.
  const auto odd = nlohmann::json::parse(openai_error(502, "bad \xff byte").body);
  EXPECT_EQ(odd["message"], "bad \xEF\xBF\xBD byte");
}

}  // namespace
}  // namespace zeus::proxy
