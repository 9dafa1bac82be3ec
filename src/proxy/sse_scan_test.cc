#include "proxy/sse_scan.h"

#include <gtest/gtest.h>

namespace zeus::proxy {
namespace {

TEST(SseScannerTest, TheAnswersTextComesOutAsItIsFedSplitAnywhere) {
  SseScanner scanner;
  const std::string stream =
      "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"lo \\u00e9\"}}]}\n\n"
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\n"
      "data: [DONE]\n\n";
  std::string text;
  int64_t tokens = 0;
  for (size_t i = 0; i < stream.size(); i += 7) {  // pieces cut mid-line
    tokens += scanner.feed(std::string_view(stream).substr(i, 7));
    text += scanner.take_text();
  }
  EXPECT_EQ(text, "Hello \xc3\xa9");
  EXPECT_EQ(tokens, 2);
  EXPECT_EQ(scanner.usage().completion_tokens, 2);
  EXPECT_TRUE(scanner.saw_done());
  EXPECT_EQ(scanner.take_text(), "");
}

TEST(SseScannerTest, ACompletionsTextIsReadAndNotJsonIsNothing) {
  Usage usage;
  std::string model, text;
  EXPECT_EQ(read_answer_json(R"({"choices":[{"text":"abc"}],"model":"m"})", &usage, &model, &text),
            1);
  EXPECT_EQ(text, "abc");
  EXPECT_EQ(model, "m");
  EXPECT_EQ(read_answer_json("not json", &usage, &model, &text), 0);
}

}  // namespace
}  // namespace zeus::proxy
