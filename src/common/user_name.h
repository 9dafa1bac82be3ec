// user_name(): a user's login name from their uid (getpwuid_r), or the uid as digits when the
// system knows no such user. Thread-safe. Used in messages that tell an operator whom to allow.
#pragma once

#include <cstdint>
#include <string>

namespace zeus {

std::string user_name(uint32_t uid);

}  // namespace zeus
