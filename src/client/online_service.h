// open_online_service: the connection to an online data service (Electricity Maps, OpenEI) that
// a provider keeps: the API key taken from its environment variable when none is given, the
// service's URL parsed and a keep-alive HTTP client of it opened (client/server_url.h).
// Thread-safety: reads the environment; otherwise pure.
//
//   auto service = client::open_online_service(options.base_url, options.timeout_s,
//                                               "OPENEI_API_KEY", options.api_key);
#pragma once

#include <memory>
#include <string>

#include "client/server_url.h"
#include "http/client.h"
#include "zeus/common/result.h"

namespace zeus::client {

struct OnlineService {
  ServerUrl url;
  std::unique_ptr<http::HttpClient> client;
};

// Sets an empty `api_key` to the environment variable `key_variable` when that is set, then
// parses `base_url` and opens its client; kInvalidArgument for a bad URL or timeout_s.
Result<OnlineService> open_online_service(const std::string& base_url, double timeout_s,
                                          const char* key_variable, std::string& api_key);

}  // namespace zeus::client
