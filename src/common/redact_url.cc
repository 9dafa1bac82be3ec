// redact_url() (zeus/common/redact_url.h).
#include "zeus/common/redact_url.h"

#include <algorithm>
#include <regex>

namespace zeus {

size_t url_userinfo_end(std::string_view rest) {
  size_t at = std::string_view::npos;
  for (size_t i = rest.size(); i-- > 0;) {
    if (rest[i] != '@') continue;
    if (at == std::string_view::npos) at = i;  // the last '@': the choice when no '/' follows
    if (rest.find('/', i + 1) != std::string_view::npos) {
      at = i;
      break;
    }
  }
  if (at == std::string_view::npos) return at;
  const std::string_view user = rest.substr(0, std::min(rest.find(':'), at));
  if (user.find_first_of("/?#@") != std::string_view::npos) return std::string_view::npos;
  return at;
}

std::string redact_url(const std::string& url) {
  // URI form: the password runs from the user name's ':' to the userinfo's '@'
  // (url_userinfo_end): '/', '?', '#' and '@' may stand in it unencoded.
  static const std::regex scheme(R"(^[A-Za-z][A-Za-z0-9+.-]*://)");
  static const std::regex keyword_password(R"((^|\s)password\s*=\s*('[^']*'|\S+))");
  static const std::regex query_password(R"(([?&](password|passwd)=)[^&#]*)");
  std::string out = url;
  std::smatch m;
  if (std::regex_search(url, m, scheme)) {
    const size_t start = static_cast<size_t>(m.length(0));
    const size_t at = url_userinfo_end(std::string_view(url).substr(start));
    const size_t colon = url.find(':', start);
    if (at != std::string::npos && colon < start + at) {
      out = url.substr(0, colon + 1) + "***" + url.substr(start + at);
    }
  }
  out = std::regex_replace(out, query_password, "$1***");
  return std::regex_replace(out, keyword_password, "$1password=***");
}

}  // namespace zeus
