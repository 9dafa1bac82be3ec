// The stream scanner: tokens, usage, ids and the answer's text read from pieces split anywhere,
// and its memory bounded on a long stream and on a line that never ends.
#include "proxy/sse_scan.h"

#include <gtest/gtest.h>

#include <string>

namespace zeus::proxy {
namespace {

TEST(SseScannerTest, TheAnswersTextComesOutAsItIsFedSplitAnywhere) {
  SseScanner scanner(/*keep_lines=*/false, /*keep_text=*/true);
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
  EXPECT_EQ(read_answer_json(R"({"choices":[{"text":"abc"}],"model":"m"})", &usage, &model, nullptr,
                             &text),
            1);
  EXPECT_EQ(text, "abc");
  EXPECT_EQ(model, "m");
  EXPECT_EQ(read_answer_json("not json", &usage, &model, nullptr, &text), 0);
}

// The members it does not read (logprobs with their own "content", a whole answer's message,
// finish_reason) change nothing, and a malformed chunk is nothing.
TEST(SseScannerTest, TheOtherMembersOfAChunkOrAnswerAreSkippedWithoutChangingWhatIsRead) {
  Usage usage;
  std::string model, id, text;
  EXPECT_EQ(read_answer_json(
                R"({"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",)"
                R"("choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},)"
                R"("logprobs":{"content":[{"token":"x","logprob":-1}]},"finish_reason":null},)"
                R"({"index":1,"delta":{"reasoning_content":"so"}},{"index":2,"delta":{}}],)"
                R"("usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}})",
                &usage, &model, &id, &text),
            2);
  EXPECT_EQ(text, "hiso");
  EXPECT_EQ(model, "m");
  EXPECT_EQ(id, "c1");
  EXPECT_EQ(usage.prompt_tokens, 3);
  EXPECT_EQ(usage.completion_tokens, 2);
  Usage whole;
  EXPECT_EQ(read_answer_json(R"({"choices":[{"message":{"content":"abc"}}],)"
                             R"("usage":{"completion_tokens":8}})",
                             &whole, &model, nullptr, nullptr),
            0);  // a whole answer's tokens come from its usage
  EXPECT_EQ(whole.completion_tokens, 8);
  EXPECT_EQ(read_answer_json(R"({"choices":[{"text":"a"}],"x":[1,)", &whole, &model, nullptr,
                             nullptr),
            0);
}

// Without keep_text no text is kept; with it, text that is not taken stops growing at
// kMaxTextBytes, cut between characters.
TEST(SseScannerTest, TextIsKeptOnlyWhenAskedAndBounded) {
  std::string content;
  for (int i = 0; i < 60; ++i) content += "\u00e9";  // 120 bytes: the cut falls inside an event
  const std::string c = "data: {\"choices\":[{\"delta\":{\"content\":\"" + content + "\"}}]}\n\n";
  SseScanner plain(/*keep_lines=*/false);
  SseScanner texting(/*keep_lines=*/false, /*keep_text=*/true);
  for (int i = 0; i < 10000; ++i) {  // 1.2 MB of text
    plain.feed(c);
    texting.feed(c);
  }
  EXPECT_EQ(plain.take_text(), "");
  EXPECT_EQ(plain.buffered_bytes(), 0u);
  const std::string text = texting.take_text();
  EXPECT_LE(text.size(), SseScanner::kMaxTextBytes);
  EXPECT_GT(text.size(), SseScanner::kMaxTextBytes - 4);
  EXPECT_EQ(text.size() % 2, 0u);  // whole two-byte characters
  EXPECT_EQ(texting.buffered_bytes(), 0u);
}

std::string chunk(int i) {
  return "data: {\"id\":\"cmpl-7\",\"model\":\"m\",\"choices\":[{\"delta\":{\"content\":\"t" +
         std::to_string(i) + "\"}}]}\n\n";
}

TEST(SseScannerTest, CountsTokensUsageModelAndIdAcrossSplits) {
  const std::string stream = chunk(0) + chunk(1) +
                             "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,"
                             "\"completion_tokens\":2}}\n\ndata: [DONE]\n\n";
  SseScanner scanner;
  int64_t tokens = 0;
  for (size_t i = 0; i < stream.size(); i += 7) tokens += scanner.feed(stream.substr(i, 7));
  EXPECT_EQ(tokens, 2);
  EXPECT_EQ(scanner.usage().prompt_tokens, 3);
  EXPECT_EQ(scanner.usage().completion_tokens, 2);
  EXPECT_EQ(scanner.model(), "m");
  EXPECT_EQ(scanner.id(), "cmpl-7");
  EXPECT_TRUE(scanner.saw_done());
  EXPECT_EQ(scanner.take_lines(false), stream);  // kept lines are the stream, byte for byte
}

// A relay that forwards bytes as they come keeps nothing: 20,000 chunks (about 1.7 MB) pass
// through a few hundred bytes of buffer.
TEST(SseScannerTest, ALongStreamIsNotBufferedWhenLinesAreNotKept) {
  SseScanner scanner(/*keep_lines=*/false);
  size_t most = 0;
  int64_t tokens = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string c = chunk(i);
    tokens += scanner.feed(std::string_view(c).substr(0, 20));
    most = std::max(most, scanner.buffered_bytes());
    tokens += scanner.feed(std::string_view(c).substr(20));
    most = std::max(most, scanner.buffered_bytes());
  }
  EXPECT_EQ(tokens, 20000);
  EXPECT_LE(most, chunk(19999).size());
  EXPECT_EQ(scanner.take_lines(false), "");
}

// A relay that edits the stream takes the lines after each piece: the buffer stays one line.
TEST(SseScannerTest, ALongStreamIsNotBufferedWhenLinesAreTaken) {
  SseScanner scanner(/*keep_lines=*/true);
  size_t most = 0;
  std::string out, in;
  for (int i = 0; i < 20000; ++i) {
    const std::string c = chunk(i);
    in += c;
    scanner.feed(c);
    most = std::max(most, scanner.buffered_bytes());
    out += scanner.take_lines(true);
  }
  EXPECT_LE(most, chunk(19999).size());
  EXPECT_EQ(out + scanner.release_done(), in);
}

// A line with no end (an upstream gone wrong) is passed on in pieces, never held whole; the
// lines after it are read again.
TEST(SseScannerTest, AnOverLongLineIsPassedOnUnread) {
  for (const bool keep : {false, true}) {
    SseScanner scanner(keep);
    const std::string piece(64 * 1024, 'x');
    std::string in = "data: ", out;
    scanner.feed("data: ");
    size_t most = 0;
    for (int i = 0; i < 64; ++i) {  // 4 MiB in one line
      in += piece;
      scanner.feed(piece);
      most = std::max(most, scanner.buffered_bytes());
      out += scanner.take_lines(true);
    }
    const std::string rest = "\n\n" + chunk(1);
    in += rest;
    EXPECT_EQ(scanner.feed(rest), 1) << keep;
    most = std::max(most, scanner.buffered_bytes());
    out += scanner.release_done();
    EXPECT_LE(most, SseScanner::kMaxLineBytes + piece.size()) << keep;
    EXPECT_EQ(out, keep ? in : "") << keep;
  }
}

}  // namespace
}  // namespace zeus::proxy
