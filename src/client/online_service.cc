#include "client/online_service.h"

#include <cstdlib>
#include <utility>

namespace zeus::client {

Result<OnlineService> open_online_service(const std::string& base_url, double timeout_s,
                                          const char* key_variable, std::string& api_key) {
  if (api_key.empty()) {
    const char* key = std::getenv(key_variable);
    if (key != nullptr) api_key = key;
  }
  auto url = parse_server_url(base_url);
  if (!url) return tl::unexpected(url.error());
  auto http = open_http_client(*url, timeout_s, true);
  if (!http) return tl::unexpected(http.error());
  return OnlineService{std::move(*url), std::move(*http)};
}

}  // namespace zeus::client
