#include "zeus/device_control/frequency_controller.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "device_control/exit_restorer.h"
#include "zeus/common/log.h"

namespace zeus {
namespace {

// Wakes the thread without a clock (stop).
constexpr uint32_t kWake = UINT32_MAX;

Error with_context(const Gpu& gpu, const std::string& action, const Error& error) {
  return Error{error.code, "clock controller, GPU " + std::to_string(gpu.physical_index()) + ": " +
                               action + ": " + error.message};
}

}  // namespace

class FrequencyController::Impl {
 public:
  Impl(Gpu& gpu, FrequencyControllerOptions options)
      : gpu_(gpu), options_(options), owner_pid_(::getpid()) {}

  ~Impl() { (void)stop(); }

  Result<void> start() {
    auto memory = gpu_.supported_memory_clocks_mhz();
    if (!memory) return fail(with_context(gpu_, "listing memory clocks", memory.error()));
    auto sm = gpu_.supported_sm_clocks_mhz();
    if (!sm) return fail(with_context(gpu_, "listing SM clocks", sm.error()));
    if (memory->empty() || sm->empty()) {
      return fail(ErrorCode::kNotSupported, "clock controller, GPU " +
                                                std::to_string(gpu_.physical_index()) +
                                                ": the GPU lists no supported clocks");
    }
    sm_clocks_mhz_ = std::move(*sm);
    std::sort(sm_clocks_mhz_.begin(), sm_clocks_mhz_.end(), std::greater<>());
    max_sm_mhz_ = sm_clocks_mhz_.front();
    max_memory_mhz_ = *std::max_element(memory->begin(), memory->end());

    // Registered before the first change, so a signal during start restores what was done.
    restorer_id_ =
        ExitRestorer::instance().add([this] { restore_for_exit(); }, options_.handle_signals);
    std::lock_guard<std::mutex> lock(device_mutex_);
    if (auto reset = gpu_.reset_power_limit(); !reset) {
      if (reset.error().code != ErrorCode::kNotSupported) {
        return fail(with_context(gpu_, "resetting the power limit to its default", reset.error()));
      }
      log_debug("clock controller: the power limit cannot be reset (not supported); left as is");
    }
    if (auto locked = gpu_.lock_memory_clocks_mhz(max_memory_mhz_, max_memory_mhz_); !locked) {
      if (locked.error().code != ErrorCode::kNotSupported) {
        return fail(with_context(gpu_, "locking the memory clock at its maximum", locked.error()));
      }
      log_debug("clock controller: this GPU cannot lock memory clocks; left as they are");
    } else {
      memory_locked_ = true;
    }
    if (auto locked = gpu_.lock_sm_clocks_mhz(max_sm_mhz_, max_sm_mhz_); !locked) {
      return fail(with_context(gpu_, "locking the SM clock at its maximum", locked.error()));
    }
    sm_locked_ = true;
    applied_mhz_.store(max_sm_mhz_);
    thread_ = std::thread([this] { run(); });
    return ok();
  }

  void request(uint32_t mhz) {
    if (mhz == 0 || mhz == kWake || stopping_.load()) return;
    requests_.fetch_add(1);
    slot_.store(mhz);
    slot_.notify_one();
  }

  void flush() {
    std::unique_lock<std::mutex> lock(idle_mutex_);
    idle_cv_.wait(lock, [&] { return stopping_.load() || (!busy_ && slot_.load() == 0); });
  }

  Result<void> stop() {
    if (::getpid() != owner_pid_) {
      // A forked child's copy: the thread and the GPU settings are the parent's.
      if (thread_.joinable()) thread_.detach();
      return ok();
    }
    stopping_.store(true);
    slot_.store(kWake);
    slot_.notify_one();
    if (thread_.joinable()) thread_.join();
    Result<void> restored = ok();
    {
      std::lock_guard<std::mutex> lock(device_mutex_);
      restored = restore_locked();
    }
    // After the restore, so that a signal arriving before it still restores.
    if (restorer_id_) {
      ExitRestorer::instance().remove(*restorer_id_);
      restorer_id_.reset();
    }
    if (!restored) log_warning(restored.error().message);
    return restored;
  }

  const std::vector<uint32_t>& supported_sm_clocks_mhz() const { return sm_clocks_mhz_; }
  uint32_t max_sm_clock_mhz() const { return max_sm_mhz_; }
  uint32_t max_memory_clock_mhz() const { return max_memory_mhz_; }
  bool memory_clock_locked() const { return memory_locked_; }
  uint32_t applied_mhz() const { return applied_mhz_.load(); }

  FrequencyControllerStats stats() const {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    FrequencyControllerStats stats = stats_;
    stats.requests = requests_.load();
    return stats;
  }

 private:
  void run() {
    while (true) {
      slot_.wait(0);
      if (stopping_.load()) break;
      {
        std::lock_guard<std::mutex> lock(idle_mutex_);
        busy_ = true;
      }
      const uint32_t mhz = slot_.exchange(0);
      if (mhz != 0 && mhz != kWake) apply(mhz);
      {
        std::lock_guard<std::mutex> lock(idle_mutex_);
        busy_ = false;
      }
      idle_cv_.notify_all();
    }
    {
      std::lock_guard<std::mutex> lock(idle_mutex_);
      busy_ = false;
    }
    idle_cv_.notify_all();
  }

  void apply(uint32_t mhz) {
    std::lock_guard<std::mutex> device_lock(device_mutex_);
    if (restored_) return;  // a signal restored the GPU: change nothing any more
    if (mhz == applied_mhz_.load()) {
      std::lock_guard<std::mutex> lock(stats_mutex_);
      ++stats_.taken;
      ++stats_.skipped;
      return;
    }
    const auto begin = std::chrono::steady_clock::now();
    auto locked = gpu_.lock_sm_clocks_mhz(mhz, mhz);
    const double elapsed_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    std::lock_guard<std::mutex> lock(stats_mutex_);
    ++stats_.taken;
    if (locked) {
      applied_mhz_.store(mhz);
      ++stats_.applied;
      stats_.apply_total_s += elapsed_s;
      stats_.apply_max_s = std::max(stats_.apply_max_s, elapsed_s);
      return;
    }
    ++stats_.failed;
    Error error =
        with_context(gpu_, "locking SM clocks at " + std::to_string(mhz) + " MHz", locked.error());
    // Warn once per distinct error; a schedule repeats its clocks every iteration.
    if (!stats_.last_error || stats_.last_error->message != error.message) {
      log_warning(error.message);
    } else {
      log_debug(error.message);
    }
    stats_.last_error = std::move(error);
  }

  // Unlocks what start() locked, once. Caller holds device_mutex_.
  Result<void> restore_locked() {
    if (restored_) return ok();
    restored_ = true;
    Result<void> result = ok();
    if (sm_locked_) {
      if (auto reset = gpu_.reset_sm_clocks(); !reset) {
        result = fail(with_context(gpu_, "unlocking SM clocks", reset.error()));
      }
    }
    if (memory_locked_) {
      if (auto reset = gpu_.reset_memory_clocks(); !reset && result) {
        result = fail(with_context(gpu_, "unlocking memory clocks", reset.error()));
      }
    }
    applied_mhz_.store(0);
    return result;
  }

  // The exit restorer's action (signal watcher or atexit): restore without joining the thread,
  // which sees restored_ and changes nothing more.
  void restore_for_exit() {
    stopping_.store(true);
    slot_.store(kWake);
    slot_.notify_one();
    std::lock_guard<std::mutex> lock(device_mutex_);
    if (auto restored = restore_locked(); !restored) log_error(restored.error().message);
  }

  Gpu& gpu_;
  const FrequencyControllerOptions options_;
  const pid_t owner_pid_;
  std::vector<uint32_t> sm_clocks_mhz_;  // highest first
  uint32_t max_sm_mhz_ = 0;
  uint32_t max_memory_mhz_ = 0;
  std::optional<uint64_t> restorer_id_;

  // The mailbox: the newest requested clock, 0 when empty, kWake to stop.
  std::atomic<uint32_t> slot_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint32_t> applied_mhz_{0};

  // Device calls and what they changed.
  std::mutex device_mutex_;
  bool sm_locked_ = false;      // guarded by device_mutex_
  bool memory_locked_ = false;  // set in start(), read-only afterwards
  bool restored_ = false;       // guarded by device_mutex_

  mutable std::mutex stats_mutex_;
  FrequencyControllerStats stats_;  // guarded by stats_mutex_ (requests kept in requests_)

  // flush(): the thread is busy between taking a request and finishing its device call.
  std::mutex idle_mutex_;
  std::condition_variable idle_cv_;
  bool busy_ = false;  // guarded by idle_mutex_

  std::thread thread_;
};

Result<std::unique_ptr<FrequencyController>> FrequencyController::start(
    Gpu& gpu, FrequencyControllerOptions options) {
  auto impl = std::make_unique<Impl>(gpu, options);
  ZEUS_TRY(impl->start());  // on failure, ~Impl undoes what start() changed
  // Every catchable signal restores the clocks (ExitRestorer); SIGKILL and a crash cannot, unless
  // zeusd holds the change as a lease. Said once per process.
  static std::once_flag told;
  if (gpu.backend().find("via zeusd") == std::string::npos && gpu.backend() != "replay") {
    std::call_once(told, [&] {
      log_warning("GPU " + std::to_string(gpu.physical_index()) + ": clocks are locked through " +
                  gpu.backend() +
                  " directly; every signal that ends this process unlocks them, but a SIGKILL or a "
                  "crash leaves them locked until `nvidia-smi -rgc -rmc` (run zeusd and set "
                  "ZEUSD_SOCK_PATH: its leases restore them in every case)");
    });
  }
  return std::unique_ptr<FrequencyController>(new FrequencyController(std::move(impl)));
}

FrequencyController::FrequencyController(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FrequencyController::~FrequencyController() = default;

void FrequencyController::request(uint32_t mhz) { impl_->request(mhz); }
void FrequencyController::flush() { impl_->flush(); }
Result<void> FrequencyController::stop() { return impl_->stop(); }
const std::vector<uint32_t>& FrequencyController::supported_sm_clocks_mhz() const {
  return impl_->supported_sm_clocks_mhz();
}
uint32_t FrequencyController::max_sm_clock_mhz() const { return impl_->max_sm_clock_mhz(); }
uint32_t FrequencyController::max_memory_clock_mhz() const { return impl_->max_memory_clock_mhz(); }
bool FrequencyController::memory_clock_locked() const { return impl_->memory_clock_locked(); }
uint32_t FrequencyController::applied_mhz() const { return impl_->applied_mhz(); }
FrequencyControllerStats FrequencyController::stats() const { return impl_->stats(); }

}  // namespace zeus
