#include "bindings.h"

namespace zeus::python {

PythonCallable::PythonCallable(py::object callable)
    : callable_(new py::object(std::move(callable)), [](py::object* object) {
        // At interpreter exit the reference is leaked rather than dropped without a GIL.
        if (Py_IsInitialized() == 0) return;
        py::gil_scoped_acquire gil;
        delete object;
      }) {}

}  // namespace zeus::python
