// The Colosseum's request bodies (the original's wire protocol), decoded strictly before anything
// reaches the DuelBook: POST /prompt {request_id, prompt, model_index, [model_preference]},
// POST /response_vote {request_id, victory_index}, POST /energy_vote {request_id, is_worth}.
// Refused with a message naming the field: not a JSON object, a missing or mistyped field, an
// unknown field, a request_id that is empty, longer than 128 bytes or holds control characters,
// an empty prompt or one over max_prompt_bytes, an index other than 0 or 1.
// Pure functions; never an exception for any input.
//
//   Result<PromptRequest> p = decode_prompt(body, 64 * 1024);
//   if (!p) return HttpResponse::error(400, p.error().message);
#pragma once

#include <string>
#include <string_view>

#include "zeus/common/result.h"

namespace zeus::proxy {

struct PromptRequest {
  std::string request_id;
  std::string prompt;
  int model_index = 0;
};
struct ResponseVoteRequest {
  std::string request_id;
  int victory_index = 0;
};
struct EnergyVoteRequest {
  std::string request_id;
  bool is_worth = false;
};

Result<PromptRequest> decode_prompt(std::string_view body, size_t max_prompt_bytes);
Result<ResponseVoteRequest> decode_response_vote(std::string_view body);
Result<EnergyVoteRequest> decode_energy_vote(std::string_view body);

}  // namespace zeus::proxy
