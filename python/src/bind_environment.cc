// The environment report of `python -m zeus_cpp.show_env`
// (zeus/zeusd_client/environment_report.h), passed as
// JSON text so Python adds its own packages before formatting.
#include <string>

#include <nlohmann/json.hpp>

#include "bindings.h"
#include "zeus/zeusd_client/environment_report.h"

namespace zeus::python {

void bind_environment(py::module_& m) {
  m.def(
      "environment_report",
      [](const std::string& packages_json) {
        const nlohmann::json packages = nlohmann::json::parse(packages_json, nullptr, false);
        if (!packages.is_array()) {
          throw py::value_error("packages must be a JSON list of {\"name\", \"version\"}");
        }
        py::gil_scoped_release release;  // discovery and the zeusd probe may take a while
        return environment_report(packages).dump();
      },
      py::arg("packages_json"),
      "The report (JSON text): packages (as given), platform, environment, libraries, gpus, "
      "cpus, backends, rapl, zeusd.");
  m.def(
      "format_environment_report",
      [](const std::string& report_json) {
        const nlohmann::json report = nlohmann::json::parse(report_json, nullptr, false);
        if (!report.is_object()) throw py::value_error("the report must be a JSON object");
        return format_environment_report(report);
      },
      py::arg("report_json"), "The report as text, one section per topic.");
}

}  // namespace zeus::python
