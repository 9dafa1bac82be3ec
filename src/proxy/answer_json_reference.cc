// read_answer_json's reference reader (answer_json_reference.h), on nlohmann/json's document.
#include "proxy/answer_json_reference.h"

#include <nlohmann/json.hpp>

#include <utility>

namespace zeus::proxy::reference {

namespace {

bool reference_non_empty(const nlohmann::json& object, const char* key, std::string* text) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
    return false;
  }
  if (text) text->append(it->get_ref<const std::string&>());
  return true;
}

}  // namespace

int64_t reference_read(std::string_view json_text, Usage* usage, std::string* model,
                       std::string* id, std::string* text) {
  const nlohmann::json doc = nlohmann::json::parse(json_text, nullptr, false);
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
  for (const nlohmann::json& choice : *choices) {
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

}  // namespace zeus::proxy::reference
