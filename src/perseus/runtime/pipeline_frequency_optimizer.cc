// PipelineFrequencyOptimizer (zeus/perseus/pipeline_frequency_optimizer.h): the schedule cursor,
// the
// instruction recorder and the clock controller of one rank, and its side of the server's rounds.
#include "zeus/perseus/pipeline_frequency_optimizer.h"

#include <string>
#include <utility>

#include "perseus/runtime/instruction_recorder.h"
#include "perseus/runtime/schedule_cursor.h"
#include "zeus/common/log.h"
#include "zeus/monitor/energy_monitor.h"

namespace zeus {
namespace {

Result<void> check_options(const PipelineFrequencyOptimizerOptions& o, const Devices& devices,
                           int gpu_index) {
  auto bad = [](const std::string& m) { return fail(ErrorCode::kInvalidArgument, m); };
  if (gpu_index < 0 || static_cast<size_t>(gpu_index) >= devices.gpus.size()) {
    return bad("GPU index " + std::to_string(gpu_index) + " is not among the " +
               std::to_string(devices.gpus.size()) +
               " visible GPUs; give the index of this rank's GPU (check CUDA_VISIBLE_DEVICES)");
  }
  if (o.dp_degree < 1 || o.pp_degree < 1 || o.tp_degree < 1) {
    return bad("the dp, pp and tp degrees must be >= 1 (got dp " + std::to_string(o.dp_degree) +
               ", pp " + std::to_string(o.pp_degree) + ", tp " + std::to_string(o.tp_degree) + ")");
  }
  const long long product = 1LL * o.dp_degree * o.pp_degree * o.tp_degree;
  if (o.world_size != product) {
    return bad("the world size " + std::to_string(o.world_size) + " is not dp x pp x tp = " +
               std::to_string(product) + "; give the number of ranks of the job");
  }
  auto in_range = [&](const char* what, int value, int degree) -> Result<void> {
    if (value >= 0 && value < degree) return ok();
    return bad(std::string(what) + " " + std::to_string(value) + " is outside 0-" +
               std::to_string(degree - 1));
  };
  ZEUS_TRY(in_range("rank", o.rank, o.world_size));
  ZEUS_TRY(in_range("dp rank", o.dp_rank, o.dp_degree));
  ZEUS_TRY(in_range("pp rank", o.pp_rank, o.pp_degree));
  ZEUS_TRY(in_range("tp rank", o.tp_rank, o.tp_degree));
  if (!(o.counter_poll_s >= 0 && o.counter_poll_s <= 1)) {
    return bad("counter_poll_s must be between 0 (edges only) and 1 s (got " +
               std::to_string(o.counter_poll_s) + "); 0.005 reads a counter published every "
               "~100 ms to within a few ms");
  }
  if (o.world_size > 1 && !o.broadcast) {
    return bad("a job of " + std::to_string(o.world_size) +
               " ranks needs a broadcast to hand rank 0's job id to the others (e.g. "
               "torch.distributed.broadcast_object_list or MPI_Bcast)");
  }
  return ok();
}

}  // namespace

class PipelineFrequencyOptimizer::Impl {
 public:
  Impl(std::unique_ptr<PipelineFrequencyService> service, PipelineFrequencyOptimizerOptions options,
       std::unique_ptr<EnergyMonitor> monitor, std::unique_ptr<FrequencyController> controller,
       pfo::EnergyCounter counter)
      : service_(std::move(service)),
        options_(std::move(options)),
        monitor_(std::move(monitor)),
        recorder_(*monitor_, options_.rank, options_.sync, std::move(counter)),
        controller_(std::move(controller)),
        cursor_(pfo::FrequencySchedule{}) {}

  // Registers the rank and waits for the first schedule.
  Result<void> join(std::string job_id) {
    job_id_ = std::move(job_id);
    pfo::RankInfo rank{options_.rank, options_.dp_rank, options_.pp_rank, options_.tp_rank, {}};
    for (uint32_t mhz : controller_->supported_sm_clocks_mhz()) {
      rank.available_frequencies.push_back(static_cast<int>(mhz));
    }
    ZEUS_TRY(service_->register_rank(job_id_, rank));
    return next_schedule();
  }

  Result<void> on_step_begin() {
    ZEUS_TRY(check_running());
    return recorder_.on_step_begin();
  }

  Result<void> on_instruction_begin(std::string_view name) {
    ZEUS_TRY(check_running());
    ZEUS_TRY(recorder_.on_instruction_begin(name));  // syncs first, then opens the window
    Result<int> mhz = cursor_.on_instruction_begin(name);
    if (!mhz) return abandon(mhz.error());
    if (*mhz > 0) controller_->request(static_cast<uint32_t>(*mhz));
    return ok();
  }

  Result<void> on_instruction_end(std::string_view name) {
    ZEUS_TRY(check_running());
    return recorder_.on_instruction_end(name);
  }

  Result<void> on_step_end() {
    ZEUS_TRY(check_running());
    if (Result<void> consumed = cursor_.on_step_end(); !consumed) return abandon(consumed.error());
    ZEUS_TRY(recorder_.on_step_end());
    if (options_.steps_per_round == 0 || recorder_.iterations() < options_.steps_per_round) {
      return ok();
    }
    ZEUS_TRY(service_->report(job_id_, recorder_.take()));
    return next_schedule();
  }

  void wait_for_clock() { controller_->flush(); }

  Result<void> stop() {
    stopped_ = true;
    recorder_.abandon_step();  // an open step is not reported; the counter's reads stop
    return controller_->stop();
  }

  const std::string& job_id() const { return job_id_; }
  const pfo::FrequencySchedule& schedule() const { return cursor_.schedule(); }
  int rounds() const { return rounds_; }
  FrequencyControllerStats controller_stats() const { return controller_->stats(); }

 private:
  Result<void> check_running() const {
    if (!stopped_) return ok();
    return fail(ErrorCode::kInvalidArgument,
                "the pipeline frequency optimizer was stopped; create a new one to go on");
  }

  // The iteration cannot follow the schedule: it is not measured, and the next step starts afresh.
  Result<void> abandon(Error error) {
    recorder_.abandon_step();
    cursor_.reset(cursor_.schedule());
    return fail(std::move(error));
  }

  Result<void> next_schedule() {
    Result<pfo::FrequencySchedule> next = service_->schedule(job_id_, options_.rank);
    if (!next) return fail(next.error());
    if (next->rank != options_.rank) {
      return fail(ErrorCode::kInternal, "the server at " + service_->where() + " answered rank " +
                                            std::to_string(options_.rank) +
                                            " with the schedule of rank " +
                                            std::to_string(next->rank));
    }
    ++rounds_;
    if (rounds_ == 1 || next->frequencies != cursor_.schedule().frequencies) {
      log_debug("pfo: rank " + std::to_string(options_.rank) + " follows a new schedule of " +
                std::to_string(next->frequencies.size()) + " instructions (round " +
                std::to_string(rounds_ - 1) + ")");
      cursor_.reset(std::move(*next));
    }
    return ok();
  }

  std::unique_ptr<PipelineFrequencyService> service_;
  PipelineFrequencyOptimizerOptions options_;
  std::unique_ptr<EnergyMonitor> monitor_;
  pfo::InstructionRecorder recorder_;
  std::unique_ptr<FrequencyController> controller_;
  pfo::ScheduleCursor cursor_;
  std::string job_id_;
  int rounds_ = 0;
  bool stopped_ = false;
};

Result<std::unique_ptr<PipelineFrequencyOptimizer>> PipelineFrequencyOptimizer::create(
    Devices& devices, int gpu_index, Clock& clock,
    std::unique_ptr<PipelineFrequencyService> service, PipelineFrequencyOptimizerOptions options) {
  if (!service) {
    return fail(ErrorCode::kInvalidArgument,
                "no pipeline frequency service; pass make_pfo_http_client(server_url)");
  }
  // Local set-up first; rank 0 broadcasts even when it failed, so no rank waits for an id forever.
  Result<void> checked = check_options(options, devices, gpu_index);
  Result<std::unique_ptr<EnergyMonitor>> monitor = fail(ErrorCode::kInternal, "not created");
  Result<std::unique_ptr<FrequencyController>> controller =
      fail(ErrorCode::kInternal, "not started");
  if (checked) {
    EnergyMonitorOptions monitor_options;
    monitor_options.gpu_indices = std::vector<int>{gpu_index};
    monitor_options.cpu_indices = std::vector<int>{};
    monitor = EnergyMonitor::create(devices, clock, std::move(monitor_options));
  }
  if (checked && monitor) {
    FrequencyControllerOptions controller_options;
    controller_options.handle_signals = options.handle_signals;
    controller = FrequencyController::start(*devices.gpus[gpu_index], controller_options);
  }
  const bool ready = checked && monitor && controller;

  std::string job_id;
  Result<void> registered = ok();
  if (options.rank == 0 && ready) {
    pfo::JobInfo job{"",
                     options.pp_degree,
                     options.dp_degree,
                     options.tp_degree,
                     options.world_size,
                     options.job_metadata};
    Result<std::string> id = service->register_job(job);
    if (id) {
      job_id = *id;
    } else {
      registered = fail(id.error());
    }
  }
  if (options.world_size > 1 && options.broadcast) {
    Result<std::string> shared = options.broadcast(options.rank == 0 ? job_id : std::string());
    if (!shared) {
      return fail(shared.error().code, "broadcasting the job id: " + shared.error().message);
    }
    if (options.rank != 0) job_id = *shared;
  }
  if (!checked) return fail(checked.error());
  if (!monitor) return fail(monitor.error());
  if (!controller) return fail(controller.error());
  if (!registered) return fail(registered.error());
  if (job_id.empty()) {
    return fail(ErrorCode::kUnavailable, "rank 0 could not register the job with the server at " +
                                             service->where() + " (its own error says why); rank " +
                                             std::to_string(options.rank) + " has no job to join");
  }
  // Instructions are shorter than many GPUs' energy counter steps: they are measured on the
  // counter interpolated between its published values (instruction_recorder.h).
  pfo::EnergyCounter counter;
  if (Gpu* gpu = devices.gpus[gpu_index].get(); gpu->has_energy_counter()) {
    counter.clock = &clock;
    counter.background_s = options.counter_poll_s;
    counter.read_j = [gpu]() -> Result<double> {
      Result<uint64_t> mj = gpu->total_energy_mj();
      if (!mj) return fail(mj.error());
      return static_cast<double>(*mj) / 1000.0;
    };
  }
  auto impl = std::make_unique<Impl>(std::move(service), std::move(options), std::move(*monitor),
                                     std::move(*controller), std::move(counter));
  ZEUS_TRY(impl->join(std::move(job_id)));
  return std::unique_ptr<PipelineFrequencyOptimizer>(
      new PipelineFrequencyOptimizer(std::move(impl)));
}

PipelineFrequencyOptimizer::PipelineFrequencyOptimizer(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
PipelineFrequencyOptimizer::~PipelineFrequencyOptimizer() {
  if (impl_) (void)impl_->stop();
}

Result<void> PipelineFrequencyOptimizer::on_step_begin() { return impl_->on_step_begin(); }
Result<void> PipelineFrequencyOptimizer::on_instruction_begin(std::string_view name) {
  return impl_->on_instruction_begin(name);
}
Result<void> PipelineFrequencyOptimizer::on_instruction_end(std::string_view name) {
  return impl_->on_instruction_end(name);
}
Result<void> PipelineFrequencyOptimizer::on_step_end() { return impl_->on_step_end(); }
void PipelineFrequencyOptimizer::wait_for_clock() { impl_->wait_for_clock(); }
Result<void> PipelineFrequencyOptimizer::stop() { return impl_->stop(); }
const std::string& PipelineFrequencyOptimizer::job_id() const { return impl_->job_id(); }
const pfo::FrequencySchedule& PipelineFrequencyOptimizer::schedule() const {
  return impl_->schedule();
}
int PipelineFrequencyOptimizer::rounds() const { return impl_->rounds(); }
FrequencyControllerStats PipelineFrequencyOptimizer::controller_stats() const {
  return impl_->controller_stats();
}

}  // namespace zeus
