#include "colosseum/colosseum_wire.h"

#include <nlohmann/json.hpp>

#include <initializer_list>

namespace zeus::proxy {
namespace {

using nlohmann::json;

Result<json> object_of(std::string_view body, std::initializer_list<std::string_view> fields,
                       std::string_view route) {
  json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return fail(ErrorCode::kInvalidArgument,
                std::string(route) + ": the body must be a JSON object");
  }
  for (const auto& [name, value] : doc.items()) {
    bool known = false;
    for (std::string_view f : fields) known = known || name == f;
    if (!known) {
      std::string list;
      for (std::string_view f : fields) list += (list.empty() ? "" : ", ") + std::string(f);
      return fail(ErrorCode::kInvalidArgument,
                  std::string(route) + ": unknown field '" + name + "' (known: " + list + ")");
    }
  }
  return doc;
}

Result<std::string> request_id_of(const json& doc, std::string_view route) {
  const auto it = doc.find("request_id");
  if (it == doc.end() || !it->is_string()) {
    return fail(ErrorCode::kInvalidArgument,
                std::string(route) + ": request_id (a string) is required");
  }
  const std::string& id = it->get_ref<const std::string&>();
  if (id.empty() || id.size() > 128) {
    return fail(ErrorCode::kInvalidArgument,
                std::string(route) + ": request_id must have 1 to 128 characters");
  }
  for (unsigned char c : id) {
    if (c < 0x20 || c == 0x7f) {
      return fail(ErrorCode::kInvalidArgument,
                  std::string(route) + ": request_id must not hold control characters");
    }
  }
  return id;
}

Result<int> index_of(const json& doc, const char* field, std::string_view route) {
  const auto it = doc.find(field);
  if (it == doc.end() || !it->is_number_integer() || (*it != 0 && *it != 1)) {
    return fail(ErrorCode::kInvalidArgument,
                std::string(route) + ": " + field + " must be 0 or 1 (the side)");
  }
  return it->get<int>();
}

}  // namespace

Result<PromptRequest> decode_prompt(std::string_view body, size_t max_prompt_bytes) {
  constexpr std::string_view route = "POST /prompt";
  Result<json> doc =
      object_of(body, {"request_id", "prompt", "model_index", "model_preference"}, route);
  if (!doc) return fail(doc.error());
  PromptRequest out;
  {
    auto v = request_id_of(*doc, route);
    if (!v) return fail(v.error());
    out.request_id = *v;
  }
  {
    auto v = index_of(*doc, "model_index", route);
    if (!v) return fail(v.error());
    out.model_index = *v;
  }
  const auto prompt = doc->find("prompt");
  if (prompt == doc->end() || !prompt->is_string() ||
      prompt->get_ref<const std::string&>().empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "POST /prompt: prompt (a non-empty string) is required");
  }
  out.prompt = prompt->get<std::string>();
  if (out.prompt.size() > max_prompt_bytes) {
    return fail(ErrorCode::kInvalidArgument, "POST /prompt: the prompt is over " +
                                                 std::to_string(max_prompt_bytes) +
                                                 " bytes; shorten it");
  }
  return out;
}

Result<ResponseVoteRequest> decode_response_vote(std::string_view body) {
  constexpr std::string_view route = "POST /response_vote";
  Result<json> doc = object_of(body, {"request_id", "victory_index"}, route);
  if (!doc) return fail(doc.error());
  ResponseVoteRequest out;
  {
    auto v = request_id_of(*doc, route);
    if (!v) return fail(v.error());
    out.request_id = *v;
  }
  {
    auto v = index_of(*doc, "victory_index", route);
    if (!v) return fail(v.error());
    out.victory_index = *v;
  }
  return out;
}

Result<EnergyVoteRequest> decode_energy_vote(std::string_view body) {
  constexpr std::string_view route = "POST /energy_vote";
  Result<json> doc = object_of(body, {"request_id", "is_worth"}, route);
  if (!doc) return fail(doc.error());
  EnergyVoteRequest out;
  {
    auto v = request_id_of(*doc, route);
    if (!v) return fail(v.error());
    out.request_id = *v;
  }
  const auto worth = doc->find("is_worth");
  if (worth == doc->end() || !worth->is_boolean()) {
    return fail(ErrorCode::kInvalidArgument, "POST /energy_vote: is_worth must be true or false");
  }
  out.is_worth = worth->get<bool>();
  return out;
}

}  // namespace zeus::proxy
