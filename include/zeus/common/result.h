// Result<T> and Error: how every public Zeus function reports failure.
//
// Device calls really fail (no driver, no permission, not supported on this GPU), so public
// functions return Result<T> = tl::expected<T, Error> instead of throwing. An Error carries one
// of a few canonical codes and a message that names the problem and, where there is one, the fix.
// No exception crosses a public header. Broken invariants in Zeus's own code abort via ZEUS_CHECK.
//
// Thread-safety: values; no shared state.
//
//   zeus::Result<uint32_t> limit = gpu.power_limit_mw();
//   if (!limit) std::cerr << limit.error().to_string() << "\n";
//   else use(*limit);
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include <tl/expected.hpp>

namespace zeus {

// Canonical error codes. Keep this list short; the message carries the detail.
enum class ErrorCode {
  kNotSupported,      // the device or driver cannot do this (e.g. energy counter before Volta)
  kPermissionDenied,  // needs root / CAP_SYS_ADMIN / a readable file
  kNotFound,          // unknown index, window name, file, job
  kInvalidArgument,   // the caller passed a bad value
  kUnavailable,       // a library or device is missing or gone (driver not loaded, GPU lost)
  kInternal,          // anything else
};

// Lower-case name of a code, e.g. "permission denied".
std::string_view error_code_name(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;

  // "permission denied: setting a power limit needs root or CAP_SYS_ADMIN".
  std::string to_string() const;
};

template <typename T>
using Result = tl::expected<T, Error>;

// Builds the unexpected value of a Result: `return zeus::fail(ErrorCode::kNotFound, "...");`.
inline tl::unexpected<Error> fail(ErrorCode code, std::string message) {
  return tl::unexpected<Error>(Error{code, std::move(message)});
}
inline tl::unexpected<Error> fail(Error error) { return tl::unexpected<Error>(std::move(error)); }

// The success value of a Result<void>.
inline Result<void> ok() { return {}; }

namespace detail {
[[noreturn]] void check_failed(const char* file, int line, const char* condition,
                               const std::string& message);
}  // namespace detail

}  // namespace zeus

// Aborts with file, line and message when `cond` is false. For invariants of Zeus's own code,
// never for bad input (that is an Error).
#define ZEUS_CHECK(cond, msg)                                               \
  do {                                                                      \
    if (!(cond)) ::zeus::detail::check_failed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)

// Evaluates a Result-returning expression; on failure returns its error from the current function.
#define ZEUS_TRY(expr)                                  \
  do {                                                  \
    auto zeus_try_result_ = (expr);                     \
    if (!zeus_try_result_) return ::zeus::fail(std::move(zeus_try_result_.error())); \
  } while (0)
