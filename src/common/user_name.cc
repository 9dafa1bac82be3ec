#include "common/user_name.h"

#include <pwd.h>

#include <vector>

namespace zeus {

std::string user_name(uint32_t uid) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || !found) {
    return std::to_string(uid);
  }
  return found->pw_name;
}

}  // namespace zeus
