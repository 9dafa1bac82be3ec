#include "errors.h"

#include <array>

namespace zeus::python {
namespace {

// Indexed by ErrorCode; set once at import, never freed (the module lives until exit).
std::array<PyObject*, 6> g_classes{};
PyObject* g_base = nullptr;

PyObject* make_class(py::module_& module, const char* name, const char* doc, py::tuple bases) {
  const std::string qualified = std::string("zeus_cpp.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (cls == nullptr) throw py::error_already_set();
  py::object handle = py::reinterpret_borrow<py::object>(cls);
  // KeyError quotes its message in str(); every Zeus error prints the message as it is.
  handle.attr("__str__") = py::module_::import("builtins").attr("BaseException").attr("__str__");
  module.add_object(name, handle);
  return cls;
}

}  // namespace

void register_errors(py::module_& module) {
  py::module_ builtins = py::module_::import("builtins");
  auto builtin = [&](const char* name) { return builtins.attr(name); };
  PyObject* base = PyErr_NewExceptionWithDoc(
      "zeus_cpp.ZeusError", "Base class of every error raised by zeus_cpp.",
      builtin("Exception").ptr(), nullptr);
  if (base == nullptr) throw py::error_already_set();
  g_base = base;
  module.add_object("ZeusError", py::reinterpret_borrow<py::object>(base));
  py::object base_object = py::reinterpret_borrow<py::object>(base);

  auto set = [&](ErrorCode code, PyObject* cls) { g_classes[static_cast<size_t>(code)] = cls; };
  set(ErrorCode::kNotSupported,
      make_class(module, "NotSupportedError",
                 "The device or driver cannot do this (e.g. no energy counter before Volta).",
                 py::make_tuple(base_object, builtin("NotImplementedError"))));
  set(ErrorCode::kPermissionDenied,
      make_class(module, "PermissionDeniedError",
                 "Needs root, CAP_SYS_ADMIN or a readable file.",
                 py::make_tuple(base_object, builtin("PermissionError"))));
  set(ErrorCode::kNotFound,
      make_class(module, "NotFoundError",
                 "Unknown GPU index, window name, file or job (also a KeyError and, like the "
                 "Python Zeus's errors for unknown windows, a ValueError).",
                 py::make_tuple(base_object, builtin("KeyError"), builtin("ValueError"))));
  set(ErrorCode::kInvalidArgument,
      make_class(module, "InvalidArgumentError", "The caller passed a bad value.",
                 py::make_tuple(base_object, builtin("ValueError"))));
  set(ErrorCode::kUnavailable,
      make_class(module, "UnavailableError",
                 "A library, device or service is missing or gone (driver not loaded, GPU lost).",
                 py::make_tuple(base_object, builtin("RuntimeError"))));
  set(ErrorCode::kInternal,
      make_class(module, "InternalError", "Any other failure inside Zeus.",
                 py::make_tuple(base_object, builtin("RuntimeError"))));

  py::register_exception_translator([](std::exception_ptr pointer) {
    if (!pointer) return;
    try {
      std::rethrow_exception(pointer);
    } catch (const ZeusException& e) {
      PyObject* cls = g_classes[static_cast<size_t>(e.error().code)];
      PyErr_SetString(cls != nullptr ? cls : g_base, e.error().message.c_str());
    }
  });
}

}  // namespace zeus::python
