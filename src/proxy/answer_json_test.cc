// read_answer_json's SAX handler against a reading of the parsed document (the reader it
// replaced, kept here as the reference): the same counts, usage, model, id and text on answers
// as servers send them, on odd and malformed ones, and on thousands of mutations of them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <random>
#include <string>
#include <vector>

#include "proxy/answer_json.h"

namespace zeus::proxy {
namespace {

using nlohmann::json;

bool reference_non_empty(const json& object, const char* key, std::string* text) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
    return false;
  }
  if (text) text->append(it->get_ref<const std::string&>());
  return true;
}

int64_t reference_read(std::string_view json_text, Usage* usage, std::string* model,
                       std::string* id, std::string* text) {
  const json doc = json::parse(json_text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return 0;
  if (const auto m = doc.find("model"); m != doc.end() && m->is_string() && model->empty()) {
    *model = m->get<std::string>();
  }
  if (const auto i = doc.find("id"); id && i != doc.end() && i->is_string() && id->empty()) {
    *id = i->get<std::string>();
  }
  if (const auto u = doc.find("usage"); u != doc.end() && u->is_object()) {
    for (const auto& [key, out] : {std::pair{"prompt_tokens", &usage->prompt_tokens},
                                   std::pair{"completion_tokens", &usage->completion_tokens}}) {
      const auto v = u->find(key);
      if (v != u->end() && v->is_number_integer() && v->get<int64_t>() >= 0) {
        *out = v->get<int64_t>();
      }
    }
  }
  int64_t chunks = 0;
  const auto choices = doc.find("choices");
  if (choices == doc.end() || !choices->is_array()) return 0;
  for (const json& choice : *choices) {
    if (!choice.is_object()) continue;
    const auto delta = choice.find("delta");
    const bool produced = reference_non_empty(choice, "text", text) ||
                          (delta != choice.end() && delta->is_object() &&
                           (reference_non_empty(*delta, "content", text) ||
                            reference_non_empty(*delta, "reasoning_content", text)));
    chunks += produced ? 1 : 0;
  }
  return chunks;
}

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
  dom.chunks = reference_read(input, &dom.usage, &dom.model, &dom.id, &dom.text);
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
