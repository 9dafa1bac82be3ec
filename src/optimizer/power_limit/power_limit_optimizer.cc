#include "zeus/optimizer/power_limit_optimizer.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include <unistd.h>

#include "device_control/exit_restorer.h"
#include "optimizer/power_limit/knob_control.h"
#include "zeus/common/log.h"

namespace zeus {

using State = PowerLimitOptimizer::State;

const char* state_name(State state) {
  switch (state) {
    case State::kReady:
      return "Ready";
    case State::kWarmup:
      return "Warmup";
    case State::kProfiling:
      return "Profiling";
    case State::kDone:
      return "Done";
  }
  return "?";
}

class PowerLimitOptimizer::Impl {
 public:
  Impl(EnergyMonitor& monitor, Clock& clock, PowerLimitOptimizerOptions options,
       KnobControl control, PowerLimitSelector selector, std::vector<uint32_t> candidates)
      : monitor_(monitor),
        clock_(clock),
        options_(std::move(options)),
        control_(std::move(control)),
        selector_(selector),
        candidates_(std::move(candidates)),
        steps_left_(options_.wait_steps),
        total_gpu_count_(static_cast<uint32_t>(control_.gpu_count())) {}

  // Sets the maximum, registers the exit restore, and loads a saved profile if there is one.
  Result<void> start() {
    ZEUS_TRY(control_.apply_maximum());
    owner_pid_ = ::getpid();
    restorer_id_ =
        ExitRestorer::instance().add([this] { restore_for_exit(); }, options_.handle_signals);
    registered_ = true;
    std::lock_guard<std::mutex> lock(mutex_);
    if (options_.profile_path.empty()) return ok();
    auto profile = load_power_profile(options_.profile_path);
    if (!profile) {
      if (profile.error().code != ErrorCode::kNotFound) {
        log_warning(profile.error().message + "; ignoring it and profiling again");
      }
      return ok();
    }
    const std::string source = "power profile '" + options_.profile_path + "'";
    ZEUS_TRY(check_profile_matches(*profile, control_.knob(), control_.gpu_model(), source));
    measurements_ = profile->measurements;
    if (profile->gpu_count > 0) total_gpu_count_ = profile->gpu_count;
    log_info("loaded " + source + "; skipping profiling");
    return finish();
  }

  ~Impl() {
    if (registered_) ExitRestorer::instance().remove(restorer_id_);
    // A forked child's copy (multiprocessing, DataLoader workers) owns nothing: the GPUs are the
    // parent's to put back.
    if (owner_pid_ != ::getpid()) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (state_ == State::kProfiling && monitor_.is_window_open(window_name())) {
      (void)monitor_.end_window(window_name(), /*sync=*/false, /*cancel=*/true);
    }
    auto r = control_.apply_maximum();
    if (!r) log_error("restoring the GPUs at exit failed: " + r.error().to_string());
  }

  Result<void> on_step_begin() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_) return ok();
    if (selection_pending_) return finish();  // the selector failed at the last step: again
    switch (state_) {
      case State::kReady:
        if (steps_left_ > 1) {
          --steps_left_;
          return ok();
        }
        return start_warmup();
      case State::kWarmup:
        return phase_over(options_.warmup_s) ? start_profiling() : ok();
      case State::kProfiling:
        return phase_over(options_.profile_s) ? finish_profiling() : ok();
      case State::kDone:
        return ok();
    }
    return ok();
  }

  Result<void> on_epoch_end() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_ || selection_pending_ ||
        (state_ != State::kWarmup && state_ != State::kProfiling)) {
      return ok();
    }
    log_info(std::string(state_name(state_)) + " of " + setting_text() +
             " interrupted by the end of an epoch; it restarts at the next step");
    if (state_ == State::kProfiling) {
      ZEUS_TRY(monitor_.end_window(window_name(), /*sync=*/true, /*cancel=*/true));
    }
    state_ = State::kReady;
    steps_left_ = 1;
    return control_.apply_maximum();
  }

  Result<void> restore() {
    std::lock_guard<std::mutex> lock(mutex_);
    return control_.apply_maximum();
  }

  State state() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return state_;
  }
  const std::vector<uint32_t>& candidates() const { return candidates_; }
  std::optional<uint32_t> current_setting() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (state_ == State::kWarmup || state_ == State::kProfiling) return candidates_[next_index_];
    return std::nullopt;
  }
  const std::vector<KnobMeasurement>& measurements() const { return measurements_; }
  std::optional<uint32_t> optimal_setting() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return optimal_;
  }

  std::optional<ObserverReport> observer_report() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!optimal_ || measurements_.empty()) return std::nullopt;
    const auto highest = std::max_element(
        measurements_.begin(), measurements_.end(),
        [](const KnobMeasurement& a, const KnobMeasurement& b) { return a.setting < b.setting; });
    const auto chosen =
        std::find_if(measurements_.begin(), measurements_.end(),
                     [&](const KnobMeasurement& m) { return m.setting == *optimal_; });
    ZEUS_CHECK(chosen != measurements_.end(), "the optimum is one of the measurements");
    ObserverReport report;
    report.optimal_setting = *optimal_;
    report.at_maximum = *highest;
    report.at_optimum = *chosen;
    report.energy_saving_ratio =
        highest->energy_j > 0 ? 1.0 - chosen->energy_j / highest->energy_j : 0.0;
    report.time_increase_ratio = chosen->time_s / highest->time_s - 1.0;
    return report;
  }

  PowerProfile profile() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return profile_locked();
  }

 private:
  PowerProfile profile_locked() const {
    PowerProfile p;
    p.knob = control_.knob();
    p.gpu_model = control_.gpu_model();
    p.gpu_count = total_gpu_count_;
    if (p.knob == OptimizerKnob::kSmClock) p.max_power_w = max_power_w();
    p.measurements = measurements_;
    return p;
  }

  double max_power_w() const {
    if (control_.knob() == OptimizerKnob::kPowerLimit) {
      return default_max_power_w(measurements_, total_gpu_count_);
    }
    return control_.max_power_w() / static_cast<double>(control_.gpu_count()) * total_gpu_count_;
  }

  std::string setting_text() const {
    const uint32_t s = candidates_[next_index_];
    return control_.knob() == OptimizerKnob::kPowerLimit ? std::to_string(s) + " W"
                                                         : std::to_string(s) + " MHz";
  }

  std::string window_name() const {
    const std::string prefix = control_.knob() == OptimizerKnob::kPowerLimit
                                   ? "__PowerLimitOptimizer_"
                                   : "__PowerLimitOptimizer_sm_clock_";
    return prefix + std::to_string(candidates_[next_index_]);
  }

  // Counts down the current phase; true when it is over.
  bool phase_over(const std::optional<double>& duration_s) {
    if (duration_s) return clock_.now_s() - phase_start_s_ >= *duration_s;
    return steps_left_ == 0 || --steps_left_ == 0;
  }

  Result<void> start_warmup() {
    ZEUS_TRY(control_.apply(candidates_[next_index_]));
    log_info("warming up at " + setting_text());
    state_ = State::kWarmup;
    steps_left_ = options_.warmup_steps;
    phase_start_s_ = clock_.now_s();
    const bool no_warmup = options_.warmup_s ? *options_.warmup_s <= 0 : steps_left_ == 0;
    return no_warmup ? start_profiling() : ok();
  }

  Result<void> start_profiling() {
    ZEUS_TRY(monitor_.begin_window(window_name(), /*sync=*/true, /*restart=*/true));
    log_info("profiling " + setting_text());
    state_ = State::kProfiling;
    steps_left_ = options_.profile_steps;
    phase_start_s_ = clock_.now_s();
    return ok();
  }

  Result<void> finish_profiling() {
    auto measured = monitor_.end_window(window_name());
    if (!measured) return abandon_current(measured.error());
    RankSample sample;
    sample.time_s = measured->time_s;
    for (const auto& [index, energy_j] : measured->gpu_energy_j) sample.energy_j += energy_j;
    sample.gpu_count = static_cast<uint32_t>(control_.gpu_count());
    if (options_.all_reduce) {
      auto reduced = options_.all_reduce(sample);
      if (!reduced) return abandon_current(reduced.error());
      sample = *reduced;
    }
    if (sample.gpu_count == 0) {
      return abandon_current(Error{ErrorCode::kInvalidArgument,
                                   "the all-reduce returned 0 GPUs (it must sum gpu_count over "
                                   "ranks)"});
    }
    total_gpu_count_ = sample.gpu_count;
    measurements_.push_back({candidates_[next_index_], sample.energy_j, sample.time_s});
    log_info("profiled " + setting_text() + ": " + std::to_string(sample.energy_j) + " J, " +
             std::to_string(sample.time_s) + " s");
    if (next_index_ + 1 < candidates_.size()) {
      ++next_index_;
      // If the next warm-up cannot start, Ready retries it at the next step.
      state_ = State::kReady;
      steps_left_ = 1;
      return start_warmup();
    }
    // Saved before selecting: a selector that fails (and is retried) does not lose the profile.
    if (!options_.profile_path.empty()) {
      auto saved = save_power_profile(options_.profile_path, profile_locked());
      if (!saved) log_warning("could not save the power profile: " + saved.error().to_string());
    }
    return finish();
  }

  // A measurement failed: drop it like an epoch interruption (the setting is re-warmed and
  // re-profiled at the next step) and report `error`.
  tl::unexpected<Error> abandon_current(Error error) {
    if (monitor_.is_window_open(window_name())) {
      (void)monitor_.end_window(window_name(), /*sync=*/false, /*cancel=*/true);
    }
    state_ = State::kReady;
    steps_left_ = 1;
    auto restored = control_.apply_maximum();
    if (!restored) log_warning("restoring the maximum failed: " + restored.error().to_string());
    return fail(std::move(error));
  }

  // Selects from measurements_ and sets the optimum (the maximum in observer mode). When the
  // selector fails (a custom one raised, or chose a setting that was not measured) the devices
  // go back to the maximum and the selection is retried at the next step begin.
  Result<void> finish() {
    auto optimal = selector_.select(measurements_, max_power_w());
    if (!optimal) {
      selection_pending_ = true;
      auto restored = control_.apply_maximum();
      if (!restored) log_warning("restoring the maximum failed: " + restored.error().to_string());
      Error error = optimal.error();
      error.message = "selecting the optimum with " + selector_.name() + " failed: " +
                      error.message +
                      "; the GPUs are at the maximum and the selection is tried again at the "
                      "next step";
      return fail(std::move(error));
    }
    selection_pending_ = false;
    optimal_ = *optimal;
    state_ = State::kDone;
    const std::string unit = control_.knob() == OptimizerKnob::kPowerLimit ? " W" : " MHz";
    log_info("optimal setting (" + selector_.name() + "): " + std::to_string(*optimal) + unit +
             (options_.observer ? " (observer mode: staying at the maximum)" : ""));
    return options_.observer ? control_.apply_maximum() : control_.apply(*optimal);
  }

  // Runs on the signal watcher thread or at exit: put the maximum back and stop.
  void restore_for_exit() {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    auto r = control_.apply_maximum();
    if (!r) log_error("restoring the GPUs failed: " + r.error().to_string());
  }

  EnergyMonitor& monitor_;
  Clock& clock_;
  const PowerLimitOptimizerOptions options_;
  KnobControl control_;
  const PowerLimitSelector selector_;
  const std::vector<uint32_t> candidates_;

  mutable std::mutex mutex_;
  State state_ = State::kReady;
  uint32_t steps_left_;  // in Ready, Warmup and Profiling (step mode)
  double phase_start_s_ = 0.0;
  size_t next_index_ = 0;  // the candidate being (or next to be) profiled
  std::vector<KnobMeasurement> measurements_;
  std::optional<uint32_t> optimal_;
  uint32_t total_gpu_count_;
  bool stopped_ = false;
  bool selection_pending_ = false;  // every setting is measured; the selector failed
  bool registered_ = false;
  uint64_t restorer_id_ = 0;
  pid_t owner_pid_ = 0;  // the process that created the optimizer
};

namespace {

Result<void> validate(const PowerLimitOptimizerOptions& o) {
  if (o.profile_s) {
    if (!(*o.profile_s > 0) || !std::isfinite(*o.profile_s)) {
      return fail(ErrorCode::kInvalidArgument,
                  "profile_s must be > 0 seconds (the paper found ~5 s per limit enough)");
    }
  } else if (o.profile_steps == 0) {
    return fail(ErrorCode::kInvalidArgument,
                "profile_steps must be > 0 (default 40 steps per power limit)");
  }
  if (o.warmup_s && (!(*o.warmup_s >= 0) || !std::isfinite(*o.warmup_s))) {
    return fail(ErrorCode::kInvalidArgument, "warmup_s must be >= 0 seconds");
  }
  return ok();
}

}  // namespace

Result<std::unique_ptr<PowerLimitOptimizer>> PowerLimitOptimizer::create(
    EnergyMonitor& monitor, Devices& devices, Clock& clock, PowerLimitOptimizerOptions options) {
  ZEUS_TRY(validate(options));
  std::vector<Gpu*> gpus;
  for (int index : monitor.gpu_indices()) {
    if (index < 0 || static_cast<size_t>(index) >= devices.gpus.size()) {
      return fail(ErrorCode::kNotFound, "the monitor measures GPU " + std::to_string(index) +
                                            ", which is not in the given Devices");
    }
    gpus.push_back(devices.gpus[index].get());
  }
  auto control = KnobControl::create(std::move(gpus), options.knob);
  if (!control) return fail(control.error());
  const uint32_t step = options.knob == OptimizerKnob::kPowerLimit ? options.step_w : 0;
  auto candidates = control->candidates(step, options.candidates);
  if (!candidates) return fail(candidates.error());
  if (candidates->empty()) {
    return fail(ErrorCode::kInvalidArgument, "no candidate setting to profile");
  }
  PowerLimitSelector selector =
      options.selector ? *options.selector : *PowerLimitSelector::zeus_cost(0.5);
  auto impl = std::make_unique<Impl>(monitor, clock, std::move(options), std::move(*control),
                                     selector, std::move(*candidates));
  ZEUS_TRY(impl->start());
  return std::unique_ptr<PowerLimitOptimizer>(new PowerLimitOptimizer(std::move(impl)));
}

PowerLimitOptimizer::PowerLimitOptimizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PowerLimitOptimizer::~PowerLimitOptimizer() = default;

Result<void> PowerLimitOptimizer::on_step_begin() { return impl_->on_step_begin(); }
Result<void> PowerLimitOptimizer::on_step_end() { return ok(); }
Result<void> PowerLimitOptimizer::on_epoch_begin() { return ok(); }
Result<void> PowerLimitOptimizer::on_epoch_end() { return impl_->on_epoch_end(); }
Result<void> PowerLimitOptimizer::restore() { return impl_->restore(); }
State PowerLimitOptimizer::state() const { return impl_->state(); }
const std::vector<uint32_t>& PowerLimitOptimizer::candidates() const { return impl_->candidates(); }
std::optional<uint32_t> PowerLimitOptimizer::current_setting() const {
  return impl_->current_setting();
}
const std::vector<KnobMeasurement>& PowerLimitOptimizer::measurements() const {
  return impl_->measurements();
}
std::optional<uint32_t> PowerLimitOptimizer::optimal_setting() const {
  return impl_->optimal_setting();
}
std::optional<ObserverReport> PowerLimitOptimizer::observer_report() const {
  return impl_->observer_report();
}
PowerProfile PowerLimitOptimizer::profile() const { return impl_->profile(); }

}  // namespace zeus
