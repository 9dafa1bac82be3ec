// Shared pieces of the _zeus_cpp extension: the objects that Python holds (devices, monitor),
// how Python callables are called from C++ without the GIL, and the bind_* entry points.
//
// Ownership: a DeviceSession owns one discover() result; a MonitorSession owns an EnergyMonitor
// and keeps its DeviceSession alive; optimizers and training loops keep their MonitorSession
// alive. Python holds them through std::shared_ptr, so destruction order is always safe.
// GIL: every device call, sleep and optimizer callback runs with the GIL released
// (without_gil); Python callables invoked from C++ (the sync callback, the all-reduce) take it
// back. A Python exception raised inside such a callable is parked in the thread's error
// indicator and re-raised by without_gil when the C++ call returns.
//
//   auto session = DeviceSession::discover();
//   MonitorSession monitor(session, options);
//   without_gil([&] { return monitor.monitor->begin_window("x"); });
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "errors.h"
#include "zeus/common/clock.h"
#include "zeus/device/device.h"
#include "zeus/monitor/energy_monitor.h"

namespace zeus::python {

namespace py = pybind11;

// The process's real clock (shared by every binding; SystemClock has no state).
Clock& system_clock();

// One discover() result, shared by the objects built on it.
struct DeviceSession {
  Devices devices;
  // Discovers devices from the environment (ZEUS_NVML_PATH, CUDA_VISIBLE_DEVICES, ...).
  static std::shared_ptr<DeviceSession> discover();
};

// An EnergyMonitor with the devices it measures. `mutex` serialises its use by Python threads
// (EnergyMonitor is single-threaded); take it only after releasing the GIL.
struct MonitorSession {
  std::shared_ptr<DeviceSession> session;
  std::unique_ptr<EnergyMonitor> monitor;
  std::mutex mutex;
};

// A Python callable shared by copies of a std::function; the last copy drops the reference
// under the GIL, so copies may be made and destroyed without it.
class PythonCallable {
 public:
  explicit PythonCallable(py::object callable);
  // Calls it with the GIL taken. A Python exception is parked in the error indicator (re-raised
  // by without_gil) and reported as false; nothing is called while one is parked.
  template <typename... Args>
  bool call(py::object* result, Args&&... args) const {
    py::gil_scoped_acquire gil;
    if (PyErr_Occurred() != nullptr) return false;
    try {
      py::object value = (*callable_)(std::forward<Args>(args)...);
      if (result != nullptr) *result = std::move(value);
      return true;
    } catch (py::error_already_set& error) {
      error.restore();
      return false;
    }
  }

 private:
  std::shared_ptr<py::object> callable_;
};

// Runs `fn` (returning a Result or void) without the GIL, then raises a Python exception that a
// callback parked, then the Result's error; returns the Result's value.
template <typename F>
auto without_gil(F&& fn) {
  using R = decltype(fn());
  if constexpr (std::is_void_v<R>) {
    {
      py::gil_scoped_release release;
      fn();
    }
    if (PyErr_Occurred() != nullptr) throw py::error_already_set();
  } else {
    std::optional<R> result;
    {
      py::gil_scoped_release release;
      result.emplace(fn());
    }
    if (PyErr_Occurred() != nullptr) throw py::error_already_set();
    return unwrap(std::move(*result));
  }
}

// Destroys `owned` holding `mutex`, with the GIL released when this thread holds it (the
// destructor may restore devices and call back into Python).
template <typename T>
void destroy_locked(std::unique_ptr<T>& owned, std::mutex& mutex) {
  if (!owned) return;
  if (Py_IsInitialized() != 0 && PyGILState_Check() != 0) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex);
    owned.reset();
  } else {
    std::lock_guard<std::mutex> lock(mutex);
    owned.reset();
  }
}

// InvalidArgumentError naming `what` ("GPU", "CPU") for a negative index.
inline void require_non_negative(const std::optional<std::vector<int>>& indices, const char* what) {
  if (!indices) return;
  for (int index : *indices) {
    require(index >= 0, std::string(what) + " index " + std::to_string(index) +
                            " is negative: indices count from 0 over the visible devices");
  }
}

void bind_device(py::module_& module);
void bind_cpu_soc(py::module_& module);  // after bind_device
void bind_monitor(py::module_& module);
void bind_timelines(py::module_& module);
void bind_profile(py::module_& module);
void bind_environment(py::module_& module);
void bind_power_limit(py::module_& module);
void bind_batch_size(py::module_& module);
void bind_pipeline_frequency(py::module_& module);
void bind_accounting(py::module_& module);
void bind_metric(py::module_& module);
void bind_power_streaming(py::module_& module);
void bind_zeusd_client(py::module_& module);

}  // namespace zeus::python
