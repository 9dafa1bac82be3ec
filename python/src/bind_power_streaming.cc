// _zeus_cpp.PowerStreamingClient: zeus::PowerStreamingClient for zeus_cpp.monitor.power_streaming
// (which gives it upstream Zeus's shape). Calls that wait release the GIL.
#include "bindings.h"

#ifdef ZEUS_PYTHON_HTTP_CLIENT
#include "zeus/client/power_streaming_client.h"
#endif

namespace zeus::python {

#ifdef ZEUS_PYTHON_HTTP_CLIENT
namespace {

using Target = std::tuple<std::string, std::optional<std::vector<int>>,
                          std::optional<std::vector<int>>, std::string>;

std::shared_ptr<PowerStreamingClient> make_client(const std::vector<Target>& targets,
                                                  double reconnect_delay_s, double idle_timeout_s,
                                                  int clock_samples) {
  std::vector<PowerStreamTarget> list;
  for (const auto& [address, gpus, cpus, token] : targets) {
    require_non_negative(gpus, "GPU");
    require_non_negative(cpus, "CPU");
    list.push_back({address, gpus, cpus, token});
  }
  PowerStreamingOptions options;
  options.reconnect_delay_s = reconnect_delay_s;
  options.idle_timeout_s = idle_timeout_s;
  options.clock_samples = clock_samples;
  std::unique_ptr<PowerStreamingClient> client =
      without_gil([&] { return PowerStreamingClient::start(std::move(list), options); });
  // Stopped (threads joined) without the GIL when Python lets go of it.
  return std::shared_ptr<PowerStreamingClient>(client.release(), [](PowerStreamingClient* c) {
    if (Py_IsInitialized() != 0 && PyGILState_Check() != 0) {
      py::gil_scoped_release release;
      delete c;
    } else {
      delete c;
    }
  });
}

py::dict node_dict(const NodePower& node) {
  py::dict gpus, cpus;
  for (const auto& [id, w] : node.gpu_power_w) gpus[py::int_(id)] = w;
  for (const auto& [id, p] : node.cpu_power_w) {
    cpus[py::int_(id)] = py::make_tuple(p.cpu_w, p.dram_w ? py::cast(*p.dram_w) : py::none());
  }
  py::dict out;
  out["endpoint"] = node.endpoint;
  out["connected"] = node.connected;
  out["clock_offset_s"] = node.clock_offset_s;
  out["timestamp_s"] = node.timestamp_s;
  out["gpu_power_w"] = gpus;
  out["cpu_power_w"] = cpus;
  out["power_w"] = node.power_w;
  out["energy_j"] = node.energy_j;
  out["events"] = node.events;
  out["reconnects"] = node.reconnects;
  out["error"] = node.error;
  return out;
}

}  // namespace
#endif  // ZEUS_PYTHON_HTTP_CLIENT

void bind_power_streaming(py::module_& m) {
#ifdef ZEUS_PYTHON_HTTP_CLIENT
  py::class_<PowerStreamingClient, std::shared_ptr<PowerStreamingClient>>(
      m, "_PowerStreamingClient",
      "zeus::PowerStreamingClient: zeusd power streams of many daemons (use "
      "zeus_cpp.monitor.PowerStreamingClient).")
      .def(py::init(&make_client), py::arg("targets"), py::arg("reconnect_delay_s") = 1.0,
           py::arg("idle_timeout_s") = 5.0, py::arg("clock_samples") = 5)
      .def("power",
           [](const PowerStreamingClient& c) {
             ClusterPower now;
             {
               py::gil_scoped_release release;
               now = c.power();
             }
             py::list nodes;
             for (const NodePower& node : now.nodes) nodes.append(node_dict(node));
             py::dict out;
             out["timestamp_s"] = now.timestamp_s;
             out["power_w"] = now.power_w;
             out["energy_j"] = now.energy_j;
             out["nodes"] = nodes;
             return out;
           })
      .def(
          "wait_for_update",
          [](const PowerStreamingClient& c, double timeout_s) {
            py::gil_scoped_release release;
            return c.wait_for_update(timeout_s);
          },
          py::arg("timeout_s"))
      .def("stop", [](PowerStreamingClient& c) {
        py::gil_scoped_release release;
        c.stop();
      });
#else
  (void)m;
#endif
}

}  // namespace zeus::python
