#include "proxy/answer_json.h"

#include <nlohmann/json.hpp>

#include <limits>
#include <vector>

namespace zeus::proxy {
namespace {

using json = nlohmann::json;

// Where the value being read lands: a field of interest, or nowhere (kNone).
enum class Slot : uint8_t {
  kNone, kModel, kId, kUsage, kChoices, kPrompt, kCompletion, kChoice, kText, kDelta, kContent,
  kReasoning
};
// The containers the handler is inside.
enum class Scope : uint8_t { kTop, kUsage, kChoices, kChoice, kDelta, kSkipped };

// One choice of "choices": the last value of each of its fields (duplicates: the last wins).
struct Choice {
  std::string text, content, reasoning;
  bool delta_is_object = false;
};

class AnswerFields final : public nlohmann::json_sax<json> {
 public:
  AnswerFields(bool want_model, bool want_id, bool want_text)
      : want_model_(want_model), want_id_(want_id), want_text_(want_text) {}

  bool null() override { return other(); }
  bool boolean(bool) override { return other(); }
  bool number_integer(number_integer_t value) override { return count(value); }
  bool number_unsigned(number_unsigned_t value) override {
    return value <= static_cast<number_unsigned_t>(std::numeric_limits<int64_t>::max())
               ? count(static_cast<int64_t>(value))
               : other();
  }
  bool number_float(number_float_t, const string_t&) override { return other(); }
  bool binary(binary_t&) override { return other(); }
  bool string(string_t& value) override {
    const Slot slot = take_slot();
    switch (slot) {
      case Slot::kModel: model_ok_ = true; if (want_model_) model_ = value; return true;
      case Slot::kId: id_ok_ = true; if (want_id_) id_ = value; return true;
      case Slot::kText: choice_.text = value; return true;
      case Slot::kContent: choice_.content = value; return true;
      case Slot::kReasoning: choice_.reasoning = value; return true;
      default: not_wanted(slot); return true;
    }
  }
  bool start_object(std::size_t) override {
    if (scopes_.empty()) {
      top_is_object_ = true;
      return enter(Scope::kTop);
    }
    const Slot slot = take_slot();
    switch (slot) {
      case Slot::kUsage:
        usage_is_object_ = true;
        prompt_ = completion_ = -1;
        return enter(Scope::kUsage);
      case Slot::kChoice:
        choice_ = Choice{};
        return enter(Scope::kChoice);
      case Slot::kDelta:
        choice_.delta_is_object = true;
        choice_.content.clear();
        choice_.reasoning.clear();
        return enter(Scope::kDelta);
      default:
        not_wanted(slot);
        return enter(Scope::kSkipped);
    }
  }
  bool key(string_t& name) override {
    switch (scopes_.back()) {
      case Scope::kTop:
        slot_ = name == "model"     ? Slot::kModel
                : name == "id"      ? Slot::kId
                : name == "usage"   ? Slot::kUsage
                : name == "choices" ? Slot::kChoices
                                    : Slot::kNone;
        return true;
      case Scope::kUsage:
        slot_ = name == "prompt_tokens"       ? Slot::kPrompt
                : name == "completion_tokens" ? Slot::kCompletion
                                              : Slot::kNone;
        return true;
      case Scope::kChoice:
        slot_ = name == "text" ? Slot::kText : name == "delta" ? Slot::kDelta : Slot::kNone;
        return true;
      case Scope::kDelta:
        slot_ = name == "content"               ? Slot::kContent
                : name == "reasoning_content" ? Slot::kReasoning
                                              : Slot::kNone;
        return true;
      default:
        slot_ = Slot::kNone;
        return true;
    }
  }
  bool end_object() override {
    if (scopes_.back() == Scope::kChoice) end_choice();
    return leave();
  }
  bool start_array(std::size_t) override {
    if (scopes_.empty()) return enter(Scope::kSkipped);  // the document is an array
    const Slot slot = take_slot();
    if (slot != Slot::kChoices) {
      not_wanted(slot);
      return enter(Scope::kSkipped);
    }
    choices_is_array_ = true;
    chunks_ = 0;
    text_.clear();
    return enter(Scope::kChoices);
  }
  bool end_array() override { return leave(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

  // Writes what was read (only once the whole object parsed); answers the token chunks.
  int64_t commit(Usage* usage, std::string* model, std::string* id, std::string* text) {
    if (!top_is_object_) return 0;
    if (model_ok_ && want_model_) *model = std::move(model_);
    if (id_ok_ && want_id_) *id = std::move(id_);
    if (usage_is_object_) {
      if (prompt_ >= 0) usage->prompt_tokens = prompt_;
      if (completion_ >= 0) usage->completion_tokens = completion_;
    }
    if (!choices_is_array_) return 0;
    if (text) text->append(text_);
    return chunks_;
  }

 private:
  // The slot of the value now starting: the current key's in an object, an element's in an
  // array ("choices": a choice); consumed, so a container's later values start fresh.
  Slot take_slot() {
    if (scopes_.empty()) return Slot::kNone;
    if (scopes_.back() == Scope::kChoices) return Slot::kChoice;
    const Slot slot = slot_;
    slot_ = Slot::kNone;
    return slot;
  }
  // A value of the wrong kind for its slot replaces an earlier good one (the last one wins).
  void not_wanted(Slot slot) {
    switch (slot) {
      case Slot::kModel: model_ok_ = false; break;
      case Slot::kId: id_ok_ = false; break;
      case Slot::kUsage: usage_is_object_ = false; break;
      case Slot::kChoices: choices_is_array_ = false; break;
      case Slot::kPrompt: prompt_ = -1; break;
      case Slot::kCompletion: completion_ = -1; break;
      case Slot::kText: choice_.text.clear(); break;
      case Slot::kDelta: choice_.delta_is_object = false; break;
      case Slot::kContent: choice_.content.clear(); break;
      case Slot::kReasoning: choice_.reasoning.clear(); break;
      default: break;
    }
  }
  bool other() {
    not_wanted(take_slot());
    return true;
  }
  bool count(int64_t value) {
    const Slot slot = take_slot();
    if (slot == Slot::kPrompt) prompt_ = value >= 0 ? value : -1;
    else if (slot == Slot::kCompletion) completion_ = value >= 0 ? value : -1;
    else not_wanted(slot);
    return true;
  }
  void end_choice() {
    const bool by_delta =
        choice_.delta_is_object && (!choice_.content.empty() || !choice_.reasoning.empty());
    if (choice_.text.empty() && !by_delta) return;
    ++chunks_;
    if (!want_text_) return;
    text_.append(!choice_.text.empty()      ? choice_.text
                 : !choice_.content.empty() ? choice_.content
                                            : choice_.reasoning);
  }
  bool enter(Scope scope) {
    scopes_.push_back(scope);
    slot_ = Slot::kNone;
    return true;
  }
  bool leave() {
    scopes_.pop_back();
    slot_ = Slot::kNone;
    return true;
  }

  const bool want_model_, want_id_, want_text_;
  std::vector<Scope> scopes_;
  Slot slot_ = Slot::kNone;
  bool top_is_object_ = false;
  bool model_ok_ = false, id_ok_ = false;
  std::string model_, id_;
  bool usage_is_object_ = false;
  int64_t prompt_ = -1, completion_ = -1;
  bool choices_is_array_ = false;
  int64_t chunks_ = 0;
  std::string text_;
  Choice choice_;
};

}  // namespace

int64_t read_answer_json(std::string_view json_text, Usage* usage, std::string* model,
                         std::string* id, std::string* text) {
  AnswerFields fields(model->empty(), id && id->empty(), text != nullptr);
  if (!json::sax_parse(json_text, &fields)) return 0;  // malformed: nothing read
  return fields.commit(usage, model, id, text);
}

}  // namespace zeus::proxy
