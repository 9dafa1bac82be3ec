// The request body's model and stream, read by the SAX handler, against the parsed document.
#include "proxy/request_fields.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace zeus::proxy {
namespace {

// What the proxy read before: the whole document parsed, then body["model"] / body["stream"].
RequestFields from_document(const std::string& body) {
  const nlohmann::json doc = nlohmann::json::parse(body, nullptr, false);
  RequestFields out;
  if (!doc.is_object()) return out;
  if (doc.contains("model") && doc["model"].is_string()) out.model = doc["model"];
  out.stream = doc.contains("stream") && doc["stream"] == true;
  return out;
}

// The proxy's reading before the SAX handler: nested values discarded by a parser callback.
RequestFields from_filtered_document(const std::string& body) {
  const nlohmann::json doc = nlohmann::json::parse(
      body,
      [](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
        return depth == 0 || (event != nlohmann::json::parse_event_t::object_start &&
                              event != nlohmann::json::parse_event_t::array_start);
      },
      false);
  RequestFields out;
  if (doc.is_object() && doc.contains("model") && doc["model"].is_string())
    out.model = doc["model"];
  out.stream = doc.is_object() && doc.contains("stream") && doc["stream"] == true;
  return out;
}

TEST(RequestFieldsTest, ReadsTopLevelModelAndStream) {
  const RequestFields f = read_request_fields(
      R"({"model": "meta-llama/Llama-3.1-8B-Instruct", "stream": true,
          "messages": [{"role": "user", "content": "hi", "model": "inner", "stream": false}]})");
  EXPECT_EQ(f.model, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_TRUE(f.stream);
}

TEST(RequestFieldsTest, MalformedOrNonObjectBodiesHaveNeither) {
  for (const std::string body :
       {"", "{", R"({"model": "m", "stream": true)", R"({"model": "m", "stream": true} x)",
        R"({"model": "m" "stream": true})", R"([{"model": "m", "stream": true}])", R"("model")",
        "null", R"({"model": "m", "stream": tru})", "\xff\xfe"}) {
    const RequestFields f = read_request_fields(body);
    EXPECT_EQ(f.model, "") << body;
    EXPECT_FALSE(f.stream) << body;
  }
}

TEST(RequestFieldsTest, MatchesTheParsedDocumentOnEdgeCases) {
  const std::vector<std::string> bodies = {
      R"({"model": "a", "model": "b"})",         // the last one wins
      R"({"model": "a", "model": 3})",           // ... even when it is not a string
      R"({"model": "a", "model": {"x": 1}})",    // ... or an object
      R"({"model": ["a"], "stream": [true]})",   // arrays are not values of either
      R"({"stream": true, "stream": false})",    //
      R"({"stream": false, "stream": true})",    //
      R"({"stream": 1})",                        // only the literal true streams
      R"({"stream": "true"})",                   //
      R"({"stream": null, "model": null})",      //
      R"({"model": "", "stream": true})",        //
      R"({"model": "m\u00e9\"q", "n": 1.5e3})",  // escapes are decoded
      R"({"a": {"model": "x", "b": [[{"stream": true}]]}, "model": "y"})",
      R"({})",
      R"(  {"model":"m"}  )",
      "{\"model\":\"m\",\"stream\":true,\"k\":[1,2,{}],\"z\":{}}",
  };
  for (const std::string& body : bodies) {
    const RequestFields expected = from_document(body);
    const RequestFields got = read_request_fields(body);
    EXPECT_EQ(got.model, expected.model) << body;
    EXPECT_EQ(got.stream, expected.stream) << body;
    const RequestFields before = from_filtered_document(body);
    EXPECT_EQ(got.model, before.model) << body;
    EXPECT_EQ(got.stream, before.stream) << body;
  }
}

TEST(RequestFieldsTest, LongPromptsAreSkipped) {
  std::string body = R"({"messages": [{"role": "user", "content": ")";
  body += std::string(80 * 1024, 'x');
  body += R"("}], "stream": true, "model": "m"})";
  const RequestFields f = read_request_fields(body);
  EXPECT_EQ(f.model, "m");
  EXPECT_TRUE(f.stream);
}

// A client-chosen string is kept at kMaxLabelBytes at most, cut at a UTF-8
// character's start and marked with "...".
TEST(RequestFieldsTest, ProxyBounds_ClipLabelBoundsBytesAndKeepsUtf8) {
  EXPECT_EQ(clip_label("llama-3-8b"), "llama-3-8b");
  const std::string exact(kMaxLabelBytes, 'a');
  EXPECT_EQ(clip_label(exact), exact);
  const std::string big = clip_label(std::string(4 << 20, 'x'));
  EXPECT_EQ(big.size(), kMaxLabelBytes);
  EXPECT_EQ(big.substr(big.size() - 3), "...");
  std::string accents;
  while (accents.size() < 2 * kMaxLabelBytes) accents += "\xC3\xA9";  // é
  const std::string cut = clip_label(accents);
  EXPECT_LE(cut.size(), kMaxLabelBytes);
  EXPECT_EQ((cut.size() - 3) % 2, 0u) << "cut inside a character";
}

}  // namespace
}  // namespace zeus::proxy
