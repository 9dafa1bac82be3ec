// _zeus_cpp.PipelineFrequencyOptimizer: zeus::PipelineFrequencyOptimizer over the HTTP client of
// the pipeline-frequency server (zeus_cpp.optimizer.pipeline_frequency wraps it with Zeus 0.16's
// constructor and the torch.distributed job-id broadcast).
// GIL: create (a barrier over every rank) and every hook run without it; the broadcast and sync
// callables take it back while Python runs.
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "bindings.h"
#include "zeus/perseus/pipeline_frequency_optimizer.h"
#ifdef ZEUS_PYTHON_HTTP_CLIENT
#include "zeus/perseus/pfo_http_client.h"
#endif

namespace zeus::python {
namespace {

#ifdef ZEUS_PYTHON_HTTP_CLIENT

// The optimizer with the devices it controls (kept alive); `mutex` serialises Python threads.
struct PfoSession {
  std::shared_ptr<DeviceSession> devices;
  std::unique_ptr<PipelineFrequencyOptimizer> optimizer;
  std::mutex mutex;
  ~PfoSession() { destroy_locked(optimizer, mutex); }

  // Runs a hook without the GIL, raising its error (after stop(), the core's own).
  template <typename F>
  void hook(F&& fn) {
    without_gil([&]() -> Result<void> {
      std::lock_guard<std::mutex> lock(mutex);
      return fn(*optimizer);
    });
  }
};

// Wraps a Python broadcast(value: str) -> str (rank 0's value on every rank).
JobIdBroadcast make_broadcast(py::object function) {
  require(PyCallable_Check(function.ptr()) != 0, "broadcast must be a callable or None");
  PythonCallable callable(std::move(function));
  return [callable](const std::string& value) -> Result<std::string> {
    py::gil_scoped_acquire gil;
    py::object shared;
    if (!callable.call(&shared, value)) {
      return fail(ErrorCode::kUnavailable, "the job-id broadcast raised a Python exception");
    }
    if (!py::isinstance<py::str>(shared)) {
      return fail(ErrorCode::kInternal, "the job-id broadcast must return a str");
    }
    return shared.cast<std::string>();
  };
}

std::function<void()> make_sync(py::object function) {
  require(PyCallable_Check(function.ptr()) != 0, "sync must be a callable or None");
  PythonCallable callable(std::move(function));
  return [callable] { callable.call(nullptr); };
}

std::shared_ptr<PfoSession> make_pfo_session(const std::string& server_url, int device_index,
                                           int rank, int dp_rank, int pp_rank, int tp_rank,
                                           int dp_degree, int pp_degree, int tp_degree,
                                           int world_size, std::optional<std::string> job_metadata,
                                           py::object broadcast, py::object sync,
                                           uint32_t steps_per_round, bool handle_signals,
                                           double timeout_s, double schedule_timeout_s) {
  PfoHttpClientOptions client_options;
  client_options.timeout_s = timeout_s;
  client_options.schedule_timeout_s = schedule_timeout_s;
  auto service = unwrap(make_pfo_http_client(server_url, client_options));
  PipelineFrequencyOptimizerOptions options{
      .rank = rank,
      .dp_rank = dp_rank,
      .pp_rank = pp_rank,
      .tp_rank = tp_rank,
      .dp_degree = dp_degree,
      .pp_degree = pp_degree,
      .tp_degree = tp_degree,
      .world_size = world_size,
      .job_metadata = std::move(job_metadata),
      .broadcast = broadcast.is_none() ? JobIdBroadcast() : make_broadcast(std::move(broadcast)),
      .sync = sync.is_none() ? std::function<void()>() : make_sync(std::move(sync)),
      .steps_per_round = steps_per_round,
      .handle_signals = handle_signals};
  auto session = std::make_shared<PfoSession>();
  session->devices = DeviceSession::discover();
  session->optimizer = without_gil([&] {
    return PipelineFrequencyOptimizer::create(session->devices->devices, device_index,
                                              system_clock(), std::move(service),
                                              std::move(options));
  });
  return session;
}

py::list schedule_list(const pfo::FrequencySchedule& schedule) {
  py::list out;
  for (const auto& [name, mhz] : schedule.frequencies) out.append(py::make_tuple(name, mhz));
  return out;
}

#endif  // ZEUS_PYTHON_HTTP_CLIENT

}  // namespace

void bind_pipeline_frequency(py::module_& m) {
#ifdef ZEUS_PYTHON_HTTP_CLIENT
  py::class_<PfoSession, std::shared_ptr<PfoSession>>(
      m, "PipelineFrequencyOptimizer",
      "zeus::PipelineFrequencyOptimizer: one rank of a pipeline job under `zeus pfo serve`.")
      .def(py::init(&make_pfo_session), py::arg("server_url"), py::arg("device_index"),
           py::arg("rank"), py::arg("dp_rank"), py::arg("pp_rank"), py::arg("tp_rank"),
           py::arg("dp_degree"), py::arg("pp_degree"), py::arg("tp_degree"), py::arg("world_size"),
           py::arg("job_metadata") = py::none(), py::arg("broadcast") = py::none(),
           py::arg("sync") = py::none(), py::arg("steps_per_round") = 5,
           py::arg("handle_signals") = true, py::arg("timeout_s") = 30.0,
           py::arg("schedule_timeout_s") = 3600.0)
      .def("on_step_begin",
           [](PfoSession& s) { s.hook([](auto& o) { return o.on_step_begin(); }); })
      .def("on_step_end", [](PfoSession& s) { s.hook([](auto& o) { return o.on_step_end(); }); })
      .def(
          "on_instruction_begin",
          [](PfoSession& s, const std::string& name) {
            s.hook([&](auto& o) { return o.on_instruction_begin(name); });
          },
          py::arg("name"))
      .def(
          "on_instruction_end",
          [](PfoSession& s, const std::string& name) {
            s.hook([&](auto& o) { return o.on_instruction_end(name); });
          },
          py::arg("name"))
      .def(
          "wait_for_clock",
          [](PfoSession& s) {
            s.hook([](auto& o) -> Result<void> {
              o.wait_for_clock();
              return ok();
            });
          },
          "Blocks until the clock asked for last is applied (tests).")
      .def(
          "stop",
          [](PfoSession& s) {
            without_gil([&]() -> Result<void> {
              std::lock_guard<std::mutex> lock(s.mutex);
              return s.optimizer->stop();
            });
          },
          "Unlocks the clocks; idempotent, hooks fail afterwards.")
      .def_property_readonly("job_id",
                             [](PfoSession& s) {
                               std::lock_guard<std::mutex> lock(s.mutex);
                               return s.optimizer->job_id();
                             })
      .def_property_readonly("rounds",
                             [](PfoSession& s) {
                               std::lock_guard<std::mutex> lock(s.mutex);
                               return s.optimizer->rounds();
                             })
      .def_property_readonly(
          "schedule",
          [](PfoSession& s) {
            std::lock_guard<std::mutex> lock(s.mutex);
            return schedule_list(s.optimizer->schedule());
          },
          "The current round's [(instruction, MHz), ...].")
      .def_property_readonly("controller_stats", [](PfoSession& s) {
        std::lock_guard<std::mutex> lock(s.mutex);
        const FrequencyControllerStats stats = s.optimizer->controller_stats();
        py::dict d;
        d["requests"] = stats.requests;
        d["applied"] = stats.applied;
        d["skipped"] = stats.skipped;
        d["failed"] = stats.failed;
        d["taken"] = stats.taken;
        d["apply_total_s"] = stats.apply_total_s;
        return d;
      });
#else
  (void)m;
#endif
}

}  // namespace zeus::python
