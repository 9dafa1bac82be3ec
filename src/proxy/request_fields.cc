#include "proxy/request_fields.h"

#include <nlohmann/json.hpp>

#include <cstdint>

namespace zeus::proxy {
namespace {

using json = nlohmann::json;

// Records the values of the top-level object's "model" and "stream"; every other event only
// tracks the depth. Returning true everywhere except on a parse error lets the parser check the
// whole body.
class TopLevelFields final : public nlohmann::json_sax<json> {
 public:
  RequestFields fields;

  bool null() override { return scalar(Kind::kOther); }
  bool boolean(bool value) override { return scalar(value ? Kind::kTrue : Kind::kOther); }
  bool number_integer(number_integer_t) override { return scalar(Kind::kOther); }
  bool number_unsigned(number_unsigned_t) override { return scalar(Kind::kOther); }
  bool number_float(number_float_t, const string_t&) override { return scalar(Kind::kOther); }
  bool string(string_t& value) override {
    if (at_field()) {
      if (key_ == Key::kModel) fields.model = value;
      if (key_ == Key::kStream) fields.stream = false;
    }
    return true;
  }
  bool binary(binary_t&) override { return scalar(Kind::kOther); }
  bool start_object(std::size_t) override { return open(true); }
  bool key(string_t& name) override {
    if (depth_ == 1) {
      key_ = name == "model" ? Key::kModel : name == "stream" ? Key::kStream : Key::kOther;
    }
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  enum class Kind { kTrue, kOther };
  enum class Key { kNone, kModel, kStream, kOther };

  // A value of the top-level object's current key is being read.
  bool at_field() const { return depth_ == 1 && top_is_object_; }
  bool scalar(Kind kind) {
    if (at_field()) set_non_string(kind);
    return true;
  }
  // A non-string value replaces an earlier one (the last occurrence wins).
  void set_non_string(Kind kind) {
    if (key_ == Key::kModel) fields.model.clear();
    if (key_ == Key::kStream) fields.stream = kind == Kind::kTrue;
  }
  bool open(bool object) {
    if (depth_ == 0) top_is_object_ = object;
    if (at_field()) set_non_string(Kind::kOther);  // an object or array as the value
    ++depth_;
    return true;
  }
  bool close() {
    --depth_;
    return true;
  }

  int64_t depth_ = 0;
  bool top_is_object_ = false;
  Key key_ = Key::kNone;
};

}  // namespace

RequestFields read_request_fields(std::string_view body) {
  TopLevelFields handler;
  if (!json::sax_parse(body, &handler)) return {};  // malformed: as if absent
  return handler.fields;
}

std::string clip_label(std::string_view text) {
  if (text.size() <= kMaxLabelBytes) return std::string(text);
  size_t cut = kMaxLabelBytes - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "...";
}

}  // namespace zeus::proxy
