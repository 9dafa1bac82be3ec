// read_answer_json's SAX handler against a reading of the parsed document (the reader it
// replaced, kept here as the reference): the same counts, usage, model, id and text on answers
// as servers send them, on odd and malformed ones, and on thousands of mutations of them.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "proxy/answer_json.h"
#include "proxy/answer_json_reference.h"

namespace zeus::proxy {
namespace {

struct Read {
  int64_t chunks = 0;
  Usage usage;
  std::string model, id, text;
  bool operator==(const Read& o) const {
    return chunks == o.chunks && usage.prompt_tokens == o.usage.prompt_tokens &&
           usage.completion_tokens == o.usage.completion_tokens && model == o.model &&
           id == o.id && text == o.text;
  }
};

// Both readers on `input`, from the same starting state (given model, id and usage kept when
// `preset`, as for a stream's later chunks).
void expect_same(const std::string& input, bool preset = false) {
  Read sax, dom;
  if (preset) {
    sax.model = dom.model = "first";
    sax.usage.prompt_tokens = dom.usage.prompt_tokens = 3;
  }
  sax.chunks = read_answer_json(input, &sax.usage, &sax.model, &sax.id, &sax.text);
  dom.chunks = reference::reference_read(input, &dom.usage, &dom.model, &dom.id, &dom.text);
  EXPECT_TRUE(sax == dom) << input << "\n sax: " << sax.chunks << " " << sax.model << " "
                          << sax.id << " " << sax.usage.prompt_tokens << "/"
                          << sax.usage.completion_tokens << " '" << sax.text << "'\n dom: "
                          << dom.chunks << " " << dom.model << " " << dom.id << " "
                          << dom.usage.prompt_tokens << "/" << dom.usage.completion_tokens
                          << " '" << dom.text << "'";
}

const std::vector<std::string> kAnswers = {
    R"({"id":"cmpl-1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"Hi"}}]})",
    R"({"id":"c","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})",
    R"({"id":"c","choices":[{"text":"a"},{"text":""},{"text":"b"}],"usage":{"prompt_tokens":7,"completion_tokens":2}})",
    R"({"choices":[{"delta":{"reasoning_content":"think","content":"say"}}]})",
    R"({"choices":[{"delta":{"content":"x"},"text":"y"}]})",
    R"({"model":"a","model":"b","id":1,"id":"z","choices":[]})",
    R"({"model":"a","model":2,"choices":[{"delta":"no"},{"delta":{"content":"ok"},"delta":{}}]})",
    R"({"usage":{"prompt_tokens":-1,"completion_tokens":1.5},"choices":[1,"s",null,{"text":"t"}]})",
    R"({"usage":{"prompt_tokens":18446744073709551615,"completion_tokens":9223372036854775807}})",
    R"({"usage":{"completion_tokens":4},"usage":"gone","choices":{"text":"not an array"}})",
    R"({"choices":[{"text":"a"}],"choices":[{"text":"b"},{"text":"c"}]})",
    R"({"choices":[{"text":"a"}],"choices":"none","model":"m"})",
    R"({"choices":[{"delta":{"content":"a","content":""}},{"text":["x"]},{"text":"é\u00e9\n"}]})",
    R"({"nested":{"model":"inner","choices":[{"text":"no"}]},"x":[{"model":"no"}],"model":"outer"})",
    R"([{"model":"array at the top"}])", R"("just a string")", R"(42)", R"(null)", R"({})",
    R"({"model":"m","choices":[{"text":"a"}]} trailing)", R"({"model":"m",)", R"()",
    R"({"model":"m","choices":[{"text":"a"}]}   )", "{\"text\":\"\xff\"}",
};

TEST(AnswerJsonTest, ReadsWhatTheParsedDocumentGives) {
  for (const std::string& answer : kAnswers) {
    expect_same(answer);
    expect_same(answer, /*preset=*/true);
  }
}

TEST(AnswerJsonTest, ReadsWhatTheParsedDocumentGivesOnMutatedAnswers) {
  std::mt19937 random(20261128);
  const std::string alphabet = "{}[]\",:0123456789-.eE tnrufalse\\\"abcmodelidchoicestextdelta";
  for (int round = 0; round < 20000; ++round) {
    std::string input = kAnswers[random() % kAnswers.size()];
    const int edits = 1 + static_cast<int>(random() % 3);
    for (int e = 0; e < edits && !input.empty(); ++e) {
      const size_t at = random() % input.size();
      switch (random() % 3) {
        case 0: input.erase(at, 1 + random() % 3); break;
        case 1: input.insert(at, 1, alphabet[random() % alphabet.size()]); break;
        default: input[at] = alphabet[random() % alphabet.size()]; break;
      }
    }
    expect_same(input, round % 2 == 1);
    if (::testing::Test::HasFailure()) return;  // one report is enough
  }
}

TEST(AnswerJsonTest, AWholeAnswerGivesItsUsageAndText) {
  Usage usage;
  std::string model, id, text;
  EXPECT_EQ(read_answer_json(kAnswers[2], &usage, &model, &id, &text), 2);
  EXPECT_EQ(usage.prompt_tokens, 7);
  EXPECT_EQ(usage.completion_tokens, 2);
  EXPECT_EQ(id, "c");
  EXPECT_EQ(text, "ab");
  EXPECT_TRUE(model.empty());
}

}  // namespace
}  // namespace zeus::proxy
