// The step fidelity (replay.h): one run iteration by iteration on a ReplayGpu with a FakeClock,
// measured by the real EnergyMonitor and, in a profiling run, steered by the real
// PowerLimitOptimizer.
#include <cmath>
#include <memory>

#include "sim/replay.h"
#include "zeus/device/replay_gpu.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/optimizer/power_limit_optimizer.h"

namespace zeus::sim {
namespace {

constexpr uint32_t kWarmupSteps = 10;   // the power-limit optimizer's defaults (Python Zeus)
constexpr uint32_t kProfileSteps = 40;

uint32_t limit_mw(const WorkloadTrace& trace, int p) {
  return static_cast<uint32_t>(std::lround(trace.power_limits_w[static_cast<std::size_t>(p)] * 1000.0));
}

// The index of the trace's power limit `limit_mw` (the ReplayGpu is only ever set to those).
int limit_index(const WorkloadTrace& trace, uint32_t mw) {
  for (int p = 0; p < trace.num_power_limits(); ++p) {
    if (limit_mw(trace, p) == mw) return p;
  }
  ZEUS_CHECK(false, "the replayed GPU was set to a power limit outside the trace");
  return 0;
}

template <typename T>
T checked(Result<T> result, const char* what) {
  ZEUS_CHECK(result.has_value(), std::string(what) + ": " + result.error().to_string());
  return std::move(*result);
}

void checked(Result<void> result, const char* what) {
  ZEUS_CHECK(result.has_value(), std::string(what) + ": " + result.error().to_string());
}

}  // namespace

int default_steps_per_epoch(const WorkloadTrace& trace) {
  return static_cast<int>(kWarmupSteps + kProfileSteps) * trace.num_power_limits() + 1;
}

RunRecord replay_run_steps(const WorkloadTrace& trace, const RunPlan& plan, int target_epoch, double eta,
                           int steps_per_epoch) {
  ZEUS_CHECK(plan.b >= 0 && plan.b < trace.num_batch_sizes(), "batch-size index out of range");
  ZEUS_CHECK(plan.p >= 0 && plan.p < trace.num_power_limits(), "power-limit index out of range");
  const int steps = steps_per_epoch > 0 ? steps_per_epoch : default_steps_per_epoch(trace);
  FakeClock clock;
  ReplayGpuConfig config;
  config.name = "Replay " + trace.gpu;
  config.limit_range_mw = {limit_mw(trace, 0), limit_mw(trace, trace.num_power_limits() - 1)};
  config.default_limit_mw = config.limit_range_mw.max_mw;
  const int b = plan.b;
  config.power_model = [&trace, b](double, uint32_t mw, uint32_t) {
    return trace.average_power_w(b, limit_index(trace, mw));
  };
  Devices devices;
  devices.gpus.push_back(std::make_unique<ReplayGpu>(clock, std::move(config)));
  Gpu& gpu = *devices.gpus.front();

  EnergyMonitorOptions monitor_options;
  monitor_options.gpu_indices = std::vector<int>{0};
  monitor_options.cpu_indices = std::vector<int>{};
  monitor_options.start_sampler_thread = false;
  std::unique_ptr<EnergyMonitor> monitor = checked(EnergyMonitor::create(devices, clock, monitor_options), "monitor");
  std::unique_ptr<PowerLimitOptimizer> optimizer;
  if (plan.profile_power) {
    PowerLimitOptimizerOptions options;
    for (int p = trace.num_power_limits() - 1; p >= 0; --p) {
      options.candidates.push_back(static_cast<uint32_t>(std::lround(trace.power_limits_w[static_cast<std::size_t>(p)])));
    }
    options.selector = checked(PowerLimitSelector::zeus_cost(eta), "selector");
    options.warmup_steps = kWarmupSteps;
    options.profile_steps = kProfileSteps;
    options.handle_signals = false;
    optimizer = checked(PowerLimitOptimizer::create(*monitor, devices, clock, std::move(options)), "optimizer");
  } else {
    checked(gpu.set_power_limit_mw(limit_mw(trace, plan.p)), "set power limit");
  }

  RunRecord run;
  run.b = plan.b;
  run.profiled = plan.profile_power;
  const EpochJudge judge(trace, plan, target_epoch, eta);
  if (judge.skips_run(run)) {
    run.p = plan.p;
    return run;
  }
  for (int epoch = 1; epoch <= trace.workload.max_epochs; ++epoch) {
    checked(monitor->begin_window("epoch"), "begin epoch window");
    for (int step = 0; step < steps; ++step) {
      if (optimizer) checked(optimizer->on_step_begin(), "on_step_begin");
      const int p = limit_index(trace, checked(gpu.power_limit_mw(), "read power limit"));
      clock.advance_s(trace.time_per_epoch_s(plan.b, p) / steps);
      if (optimizer) checked(optimizer->on_step_end(), "on_step_end");
    }
    if (optimizer) checked(optimizer->on_epoch_end(), "on_epoch_end");
    const Measurement m = checked(monitor->end_window("epoch"), "end epoch window");
    run.p = limit_index(trace, checked(gpu.power_limit_mw(), "read power limit"));
    if (judge.end_epoch(run, epoch, m.time_s, m.gpu_energy_j.at(0))) return run;
  }
  ZEUS_CHECK(false, "the stop rule must end a run by max_epochs");
  return run;
}

}  // namespace zeus::sim
