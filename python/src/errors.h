// Python exceptions for zeus::Error: one class per ErrorCode under a common base,
// zeus_cpp.ZeusError. The message is the library's message.
//
// Classes (created once by register_errors, exported by zeus_cpp):
//   ZeusError(Exception)
//   NotSupportedError(ZeusError, NotImplementedError)
//   PermissionDeniedError(ZeusError, PermissionError)
//   NotFoundError(ZeusError, KeyError, ValueError)   (ValueError: the Python Zeus raises it for
//                                                     unknown windows)
//   InvalidArgumentError(ZeusError, ValueError)
//   UnavailableError(ZeusError, RuntimeError)
//   InternalError(ZeusError, RuntimeError)
// Thread-safety: raise_error()/unwrap() may be called without the GIL (they throw a C++
// exception that pybind11 translates when the binding returns to Python).
//
//   zeus::python::unwrap(gpu.set_power_limit_mw(300000));   // raises PermissionDeniedError
//   auto limit_mw = zeus::python::unwrap(gpu.power_limit_mw());
#pragma once

#include <exception>
#include <string>
#include <utility>

#include <pybind11/pybind11.h>

#include "zeus/common/result.h"

namespace zeus::python {

namespace py = pybind11;

// Carries an Error to the binding boundary, where it becomes the Python class of its code.
class ZeusException : public std::exception {
 public:
  explicit ZeusException(Error error) : error_(std::move(error)) {}
  const char* what() const noexcept override { return error_.message.c_str(); }
  const Error& error() const { return error_; }

 private:
  Error error_;
};

// Creates the exception classes in `module` and installs the translator.
void register_errors(py::module_& module);

// Throws the error as a ZeusException.
[[noreturn]] inline void raise_error(Error error) { throw ZeusException(std::move(error)); }

// The value of `result`, or raises its error.
template <typename T>
T unwrap(Result<T> result) {
  if (!result) raise_error(std::move(result.error()));
  return std::move(*result);
}
inline void unwrap(Result<void> result) {
  if (!result) raise_error(std::move(result.error()));
}

// Raises InvalidArgumentError unless `condition`.
inline void require(bool condition, const std::string& message) {
  if (!condition) raise_error(Error{ErrorCode::kInvalidArgument, message});
}

}  // namespace zeus::python
