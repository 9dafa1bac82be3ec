// The _zeus_cpp extension: the C++ Zeus library for the zeus_cpp Python package.
#include "bindings.h"

PYBIND11_MODULE(_zeus_cpp, m) {
  m.doc() = "Zeus in C++: native core of the zeus_cpp package (use zeus_cpp, not this module).";
  zeus::python::register_errors(m);
  zeus::python::bind_device(m);
  zeus::python::bind_cpu_soc(m);
  zeus::python::bind_monitor(m);
  zeus::python::bind_timelines(m);
  zeus::python::bind_profile(m);
  zeus::python::bind_environment(m);
  zeus::python::bind_power_limit(m);
  zeus::python::bind_batch_size(m);
  zeus::python::bind_pipeline_frequency(m);
  zeus::python::bind_accounting(m);
  zeus::python::bind_metric(m);
  zeus::python::bind_power_streaming(m);
  zeus::python::bind_zeusd_client(m);
}
