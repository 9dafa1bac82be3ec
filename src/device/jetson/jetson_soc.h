// JetsonSoc: an NVIDIA Jetson's CPU, GPU and total rail energy, integrated from the rails' power
// (jetson_rails.h), as upstream Zeus's Jetson polling process does.
//
// Energy: trapezoids of the rail power between samples (mW x s = mJ). A sample is taken at every
// energy_mj() and, once start_sampling() ran, every interval on a background thread, so a window
// whose power changes inside it is followed (as the project's PowerSampler does for GPUs without
// an energy counter). Time comes from a Clock, so tests drive it with a FakeClock and call
// energy_mj() at the instants they choose.
// Thread-safety: every method may be called from several threads (a mutex guards the sums).
// Failure: a rail that disappears (NotFound) or becomes unreadable (PermissionDenied) fails the
// reads from then on with the rail's name, and the background thread stops sampling.
//
//   auto soc = zeus::open_jetson_soc("/sys", clock, 0.1);
//   auto before = (*soc)->energy_mj();  work();  auto after = (*soc)->energy_mj();
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "device/jetson/jetson_rails.h"
#include "zeus/common/clock.h"
#include "zeus/device/device.h"

namespace zeus {

class JetsonSoc final : public Soc {
 public:
  // Reads every rail once (the integration's start). Fails when a rail cannot be read.
  static Result<std::unique_ptr<JetsonSoc>> open(std::vector<JetsonRail> rails, Clock& clock);
  ~JetsonSoc() override;

  std::string name() const override { return "jetson"; }
  std::vector<std::string> rail_descriptions() const override;
  Result<SocEnergyMj> energy_mj() override;

  // Samples every `interval_s` (> 0) on a background thread until destruction. Uses real time
  // for its waits: only for a SystemClock.
  Result<void> start_sampling(double interval_s);

 private:
  JetsonSoc(std::vector<JetsonRail> rails, Clock& clock);
  // Reads the rails and adds the trapezoids since the last sample. Holds mutex_.
  Result<void> sample_locked();

  std::vector<JetsonRail> rails_;
  Clock& clock_;
  std::mutex mutex_;
  std::vector<double> energy_mj_;      // guarded by mutex_
  std::vector<double> last_power_mw_;  // guarded by mutex_
  double last_s_ = 0.0;                // guarded by mutex_
  std::optional<Error> failure_;       // guarded by mutex_: sticky once a rail failed
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mutex_
  std::thread sampler_;
};

// The Jetson SoC under `sysfs_root` (NotFound on other machines), sampling every
// `sample_interval_s` on a thread (0: only at reads).
Result<std::unique_ptr<Soc>> open_jetson_soc(const std::string& sysfs_root, Clock& clock,
                                             double sample_interval_s);

}  // namespace zeus
