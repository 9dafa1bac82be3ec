// _zeus_cpp.BatchSizeService (local over a memory or SQLite store, or the HTTP client of
// `zeus serve`) and _zeus_cpp.TrainingLoop (the paper's Listing 1 integration). Job specs cross
// as dicts with the Python Zeus's JobSpec field names (plus max_power in W, number_of_gpus and
// gpu_model, as the client fills them in).
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "bindings.h"
#include "zeus/optimizer/batch_size_optimizer.h"
#include "zeus/optimizer/batch_size_service.h"
#include "zeus/optimizer/bso_store.h"
#include "zeus/store/sqlite_store.h"
#include "zeus/train/training_loop.h"
#ifdef ZEUS_PYTHON_HTTP_CLIENT
#include "zeus/client/bso_http_client.h"
#endif

namespace zeus::python {
namespace {

using TrialTuple = std::tuple<std::string, int, int>;            // (job_id, batch_size, trial)
using DecisionTuple = std::tuple<bool, bool, std::string>;       // (stop, converged, message)

// A BatchSizeService with what it runs on (store and optimizer for the local one).
struct ServiceSession {
  std::unique_ptr<Store> store;
  std::unique_ptr<BatchSizeOptimizer> optimizer;
  std::unique_ptr<BatchSizeService> service;
};

template <typename T>
void read_field(const py::dict& spec, const char* key, T* out) {
  if (!spec.contains(key)) return;
  py::handle value = spec[key];
  try {
    *out = value.cast<T>();
  } catch (const py::cast_error&) {
    throw py::type_error(std::string("job spec field '") + key + "' has the wrong type (" +
                         std::string(py::str(py::type::of(value).attr("__name__"))) + ")");
  }
}

JobSpec job_from_dict(const py::dict& spec) {
  JobSpec job;
  for (auto item : spec) {
    static const char* kKnown[] = {
        "job_id", "job_id_prefix", "batch_sizes", "default_batch_size", "eta_knob", "beta_knob",
        "target_metric", "higher_is_better_metric", "max_epochs", "num_pruning_rounds",
        "window_size", "mab_prior_mean", "mab_prior_precision", "mab_num_explorations",
        "mab_seed", "max_power", "number_of_gpus", "gpu_model"};
    const std::string key = py::str(item.first);
    bool known = false;
    for (const char* k : kKnown) known = known || key == k;
    require(known, "unknown job spec field '" + key + "'");
  }
  read_field(spec, "job_id", &job.job_id);
  read_field(spec, "job_id_prefix", &job.job_id_prefix);
  read_field(spec, "batch_sizes", &job.batch_sizes);
  read_field(spec, "default_batch_size", &job.default_batch_size);
  read_field(spec, "eta_knob", &job.eta_knob);
  read_field(spec, "beta_knob", &job.beta_knob);
  read_field(spec, "target_metric", &job.target_metric);
  read_field(spec, "higher_is_better_metric", &job.higher_is_better_metric);
  read_field(spec, "max_epochs", &job.max_epochs);
  read_field(spec, "num_pruning_rounds", &job.num_pruning_rounds);
  read_field(spec, "window_size", &job.window_size);
  read_field(spec, "mab_prior_mean", &job.mab_prior_mean);
  read_field(spec, "mab_prior_precision", &job.mab_prior_precision);
  read_field(spec, "mab_num_explorations", &job.mab_num_explorations);
  read_field(spec, "mab_seed", &job.mab_seed);
  read_field(spec, "max_power", &job.max_power_w);
  read_field(spec, "number_of_gpus", &job.number_of_gpus);
  read_field(spec, "gpu_model", &job.gpu_model);
  return job;
}

py::dict job_to_dict(const JobSpec& job) {
  py::dict d;
  d["job_id"] = job.job_id;
  d["job_id_prefix"] = job.job_id_prefix;
  d["batch_sizes"] = job.batch_sizes;
  d["default_batch_size"] = job.default_batch_size;
  d["eta_knob"] = job.eta_knob;
  d["beta_knob"] = job.beta_knob;
  d["target_metric"] = job.target_metric;
  d["higher_is_better_metric"] = job.higher_is_better_metric;
  d["max_epochs"] = job.max_epochs;
  d["num_pruning_rounds"] = job.num_pruning_rounds;
  d["window_size"] = job.window_size;
  d["mab_prior_mean"] = job.mab_prior_mean;
  d["mab_prior_precision"] = job.mab_prior_precision;
  d["mab_num_explorations"] = job.mab_num_explorations;
  d["mab_seed"] = job.mab_seed;
  d["max_power"] = job.max_power_w;
  d["number_of_gpus"] = job.number_of_gpus;
  d["gpu_model"] = job.gpu_model;
  return d;
}

std::shared_ptr<ServiceSession> make_local(const std::string& store_path) {
  auto session = std::make_shared<ServiceSession>();
  if (store_path.empty()) {
    session->store = make_memory_store();
  } else {
    session->store = without_gil([&] { return open_sqlite_store(store_path); });
  }
  session->optimizer = std::make_unique<BatchSizeOptimizer>(*session->store);
  session->service = make_local_batch_size_service(*session->optimizer);
  return session;
}

std::shared_ptr<ServiceSession> make_http(const std::string& server_url, const std::string& token,
                                          double timeout_s) {
#ifdef ZEUS_PYTHON_HTTP_CLIENT
  auto session = std::make_shared<ServiceSession>();
  session->service = unwrap(make_http_batch_size_service(
      server_url, BsoHttpClientOptions{.token = token, .timeout_s = timeout_s}));
  return session;
#else
  (void)token;
  (void)timeout_s;
  raise_error(Error{ErrorCode::kNotSupported,
                    "this zeus_cpp was built without the HTTP client (library zeus_client), so "
                    "it cannot reach " + server_url + "; rebuild with the zeus_client library (Boost from libboost-dev)"});
#endif
}

// A TrainingLoop with the service and monitor it uses (kept alive).
struct LoopSession {
  std::shared_ptr<ServiceSession> service;
  std::shared_ptr<MonitorSession> monitor;
  std::unique_ptr<TrainingLoop> loop;
  ~LoopSession() {
    if (monitor) destroy_locked(loop, monitor->mutex);
  }
  // Runs fn holding the monitor's mutex (the loop opens and closes monitor windows).
  template <typename F>
  auto locked(F&& fn) {
    std::lock_guard<std::mutex> lock(monitor->mutex);
    return fn();
  }
  TrainingLoop& get() {
    if (!loop) raise_error(Error{ErrorCode::kInvalidArgument, "the training loop was closed"});
    return *loop;
  }
};

std::shared_ptr<LoopSession> make_loop(std::shared_ptr<ServiceSession> service,
                                       std::shared_ptr<MonitorSession> monitor,
                                       const py::dict& job, bool optimize_power_limit,
                                       const PowerLimitSelector& selector, uint32_t warmup_steps,
                                       uint32_t profile_steps, uint32_t pl_step_w,
                                       bool handle_signals) {
  require(service != nullptr && monitor != nullptr, "service and monitor are required");
  TrainingLoopOptions options;
  options.job = job_from_dict(job);
  options.optimize_power_limit = optimize_power_limit;
  options.power_limit.selector = selector;
  options.power_limit.warmup_steps = std::max<uint32_t>(warmup_steps, 1);
  require(profile_steps > 0, "profile_steps must be positive");
  require(pl_step_w > 0, "pl_step must be positive (W)");
  options.power_limit.profile_steps = profile_steps;
  options.power_limit.step_w = pl_step_w;
  options.power_limit.handle_signals = handle_signals;
  auto session = std::make_shared<LoopSession>();
  session->service = std::move(service);
  session->monitor = std::move(monitor);
  session->loop = without_gil([&] {
    std::lock_guard<std::mutex> lock(session->monitor->mutex);
    return TrainingLoop::create(*session->service->service, *session->monitor->monitor,
                                session->monitor->session->devices, system_clock(),
                                std::move(options));
  });
  return session;
}

}  // namespace

void bind_batch_size(py::module_& m) {
  py::class_<ServiceSession, std::shared_ptr<ServiceSession>>(
      m, "BatchSizeService", "The batch-size optimizer: in this process, or `zeus serve`.")
      .def_static("local", &make_local, py::arg("store_path") = "",
                  "An in-process optimizer over SQLite at store_path (empty: in memory).")
      .def_static("http", &make_http, py::arg("server_url"), py::arg("token") = "",
                  py::arg("timeout_s") = 10.0, "The client of the service at server_url.")
      .def(
          "register_job",
          [](ServiceSession& s, const py::dict& spec) {
            JobSpec job = job_from_dict(spec);
            return job_to_dict(without_gil([&] { return s.service->register_job(job); }));
          },
          py::arg("spec"), "Registers the job (idempotent); returns it with its job_id.")
      .def(
          "next_batch_size",
          [](ServiceSession& s, const std::string& job_id) {
            TrialId t = without_gil([&] { return s.service->next_batch_size(job_id); });
            return TrialTuple{t.job_id, t.batch_size, t.trial_number};
          },
          py::arg("job_id"), "Dispatches a trial: (job_id, batch_size, trial_number).")
      .def(
          "report",
          [](ServiceSession& s, const std::string& job_id, int batch_size, int trial_number,
             double time_s, double energy_j, double metric, int current_epoch) {
            TrialReport report{job_id, batch_size, trial_number, time_s,
                               energy_j, metric,     current_epoch};
            ReportDecision d = without_gil([&] { return s.service->report(report); });
            return DecisionTuple{d.stop_train, d.converged, d.message};
          },
          py::arg("job_id"), py::arg("batch_size"), py::arg("trial_number"), py::arg("time"),
          py::arg("energy"), py::arg("metric"), py::arg("current_epoch"),
          "Reports cumulative time (s) and energy (J): (stop_train, converged, message).")
      .def(
          "end_trial",
          [](ServiceSession& s, const std::string& job_id, int batch_size, int trial_number) {
            without_gil([&] {
              return s.service->end_trial(TrialId{job_id, batch_size, trial_number});
            });
          },
          py::arg("job_id"), py::arg("batch_size"), py::arg("trial_number"),
          "Marks a trial that did not end normally as failed.");

  py::class_<LoopSession, std::shared_ptr<LoopSession>>(
      m, "TrainingLoop", "zeus::TrainingLoop: one recurrence of a job, optimised by Zeus.")
      .def(py::init(&make_loop), py::arg("service"), py::arg("monitor"), py::arg("job"),
           py::arg("optimize_power_limit") = true,
           py::arg("selector") = PowerLimitSelector::zeus_cost(0.5).value(),
           py::arg("warmup_steps") = 10, py::arg("profile_steps") = 40,
           py::arg("pl_step_w") = 25, py::arg("handle_signals") = true)
      .def_property_readonly("batch_size", [](LoopSession& s) { return s.get().batch_size(); })
      .def_property_readonly("trial", [](LoopSession& s) {
        const TrialId& t = s.get().trial();
        return TrialTuple{t.job_id, t.batch_size, t.trial_number};
      })
      .def_property_readonly("job", [](LoopSession& s) { return job_to_dict(s.get().job()); })
      .def("next_epoch",
           [](LoopSession& s) {
             TrainingLoop& loop = s.get();
             bool more = false;
             {
               py::gil_scoped_release release;
               more = s.locked([&] { return loop.next_epoch(); });
             }
             if (PyErr_Occurred() != nullptr) throw py::error_already_set();
             return more;
           },
           "Starts the next epoch: False when training should stop (see error).")
      .def("on_step_begin",
           [](LoopSession& s) { without_gil([&, &loop = s.get()] {
             return s.locked([&] { return loop.on_step_begin(); });
           }); })
      .def("on_step_end",
           [](LoopSession& s) { without_gil([&, &loop = s.get()] {
             return s.locked([&] { return loop.on_step_end(); });
           }); })
      .def(
          "report_metric",
          [](LoopSession& s, double metric) {
            TrainingLoop& loop = s.get();
            ReportDecision d =
                without_gil([&] { return s.locked([&] { return loop.report_metric(metric); }); });
            return DecisionTuple{d.stop_train, d.converged, d.message};
          },
          py::arg("metric"))
      .def_property_readonly("epochs_done", [](LoopSession& s) { return s.get().epochs_done(); })
      .def_property_readonly("time_s", [](LoopSession& s) { return s.get().time_s(); })
      .def_property_readonly("energy_j", [](LoopSession& s) { return s.get().energy_j(); })
      .def_property_readonly("stopped", [](LoopSession& s) { return s.get().stopped(); })
      .def_property_readonly("error",
                             [](LoopSession& s) -> std::optional<std::string> {
                               const auto& error = s.get().error();
                               if (!error) return std::nullopt;
                               return error->to_string();
                             })
      .def_property_readonly("power_limit_state",
                             [](LoopSession& s) -> std::optional<std::string> {
                               PowerLimitOptimizer* plo = s.get().power_limit_optimizer();
                               if (plo == nullptr) return std::nullopt;
                               return state_name(plo->state());
                             })
      .def_property_readonly("optimal_power_limit_w",
                             [](LoopSession& s) -> std::optional<uint32_t> {
                               PowerLimitOptimizer* plo = s.get().power_limit_optimizer();
                               if (plo == nullptr) return std::nullopt;
                               return plo->optimal_setting();
                             })
      .def("close",
           [](LoopSession& s) {
             std::unique_ptr<TrainingLoop> loop = std::move(s.loop);
             py::gil_scoped_release release;
             std::lock_guard<std::mutex> lock(s.monitor->mutex);
             loop.reset();
           },
           "Ends the loop now: a trial that did not end is marked failed, limits are restored.");
}

}  // namespace zeus::python
