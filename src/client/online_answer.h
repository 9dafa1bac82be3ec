// online_json_answer: one GET to an online data service (Electricity Maps, OpenEI) and its JSON
// answer, with the failures a user can act on told apart: Unavailable (cannot reach it, a
// timeout, a 5xx), PermissionDenied (401/403: the API key, naming its variable), NotFound (404),
// InvalidArgument (an answer that is not JSON). Every message names the service, its URL and
// what to do.
// Thread-safety: as the client.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "http/client.h"
#include "zeus/common/result.h"

namespace zeus::client {

Result<nlohmann::json> online_json_answer(http::HttpClient& client, const std::string& service,
                                          const std::string& base_url, const std::string& target,
                                          const http::Headers& headers,
                                          const std::string& key_variable);

}  // namespace zeus::client
