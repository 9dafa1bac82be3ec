// redact_url: a URL or connection string as messages, logs and answers may show it.
#pragma once

#include <string>
#include <string_view>

namespace zeus {

// Where the userinfo of a URL ends, given the text after "scheme://": the position of its '@', or
// npos when it has none. A password may hold '/', '?', '#' and '@' unencoded (SQLAlchemy and
// base64 passwords), so the userinfo runs to the last '@' that a '/' follows (the host's path),
// or to the last '@' when no '/' follows any; the user name (up to the first ':') must hold no
// '/', '?', '#' or '@'. A '@' in a query after the path (?unix_socket=/run/a@b) is no userinfo.
size_t url_userinfo_end(std::string_view after_scheme);

// url with its password replaced by "***", for messages and logs (any scheme, "+driver" too:
// "mysql+asyncmy://me:***@db:3306/Zeus"; the password as url_userinfo_end finds it, whatever
// it holds; a "password=" or "passwd=" query parameter; libpq's "password=..." keyword).
// Thread-safety: pure functions.
std::string redact_url(const std::string& url);

}  // namespace zeus
