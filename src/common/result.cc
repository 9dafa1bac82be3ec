#include "zeus/common/result.h"

namespace zeus {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kNotSupported:
      return "not supported";
    case ErrorCode::kPermissionDenied:
      return "permission denied";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kInternal:
      return "internal error";
  }
  return "unknown error";
}

std::string Error::to_string() const {
  std::string out(error_code_name(code));
  out += ": ";
  out += message;
  return out;
}

namespace detail {
void check_failed(const char* file, int line, const char* condition, const std::string& message) {
  std::fprintf(stderr, "zeus: CHECK failed at %s:%d: %s: %s\n", file, line, condition,
               message.c_str());
  std::fflush(stderr);
  std::abort();
}
}  // namespace detail

}  // namespace zeus
