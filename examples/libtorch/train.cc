// A libtorch training job optimised by Zeus in C++: the EnergyMonitor measures each epoch, the
// JIT PowerLimitOptimizer profiles power limits in the first epoch, and the TrainingLoop (the
// paper's Listing 1) gets the batch size from the batch-size optimizer and stops at the target.
//
// Usage: zeus_libtorch_example [--store sqlite-path] [--target 0.9] [--max-epochs 8]
// (README.md next to this file: how to build and run it, and what it shows).
// Devices come from the environment (ZEUS_NVML_PATH, CUDA_VISIBLE_DEVICES); the job trains on
// the CPU (synthetic data) while Zeus controls GPU 0. Prints one line per epoch and a summary:
//   batch_size 32 ... / profiled power_limit_w 300 ... / epoch 0 accuracy ... (decision) /
//   optimal_power_limit_w 100 / converged yes / epochs 3 / energy_j 83.7 / time_s 0.81
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <torch/torch.h>

#include "zeus/common/clock.h"
#include "zeus/device/device.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/optimizer/batch_size_optimizer.h"
#include "zeus/optimizer/batch_size_service.h"
#include "zeus/optimizer/bso_store.h"
#include "zeus/store/sqlite_store.h"
#include "zeus/train/training_loop.h"

namespace {

struct Args {
  std::string store_path;  // empty: in memory
  double target = 0.9;
  int max_epochs = 8;
};

constexpr const char* kUsage =
    "usage: zeus_libtorch_example [--store SQLITE_PATH] [--target ACCURACY] [--max-epochs N]";

[[noreturn]] void usage_error(const std::string& problem) {
  std::cerr << "zeus_libtorch_example: " << problem << "\n" << kUsage << "\n";
  std::exit(2);
}

// The whole of `text` as a finite number, or a usage error naming `flag`.
double number_or_exit(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(value)) {
    usage_error(flag + " '" + text + "' is not a number");
  }
  return value;
}

Args parse_args(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::cout << kUsage << "\n";
      std::exit(0);
    }
    if (flag != "--store" && flag != "--target" && flag != "--max-epochs") {
      usage_error("unknown flag " + flag);
    }
    if (i + 1 >= argc) usage_error(flag + " needs a value");
    const std::string value = argv[i + 1];
    if (flag == "--store") {
      if (value.empty()) usage_error("--store needs a path");
      args.store_path = value;
    } else if (flag == "--target") {
      args.target = number_or_exit(flag, value);
    } else {
      const double epochs = number_or_exit(flag, value);
      if (!(epochs >= 1 && epochs <= 10000 && std::floor(epochs) == epochs)) {
        usage_error("--max-epochs '" + value + "' is not a whole number from 1 to 10000");
      }
      args.max_epochs = static_cast<int>(epochs);
    }
  }
  return args;
}

template <typename T>
T value_or_exit(zeus::Result<T> result, const char* what) {
  if (!result) {
    std::cerr << what << ": " << result.error().to_string() << "\n";
    std::exit(1);
  }
  return std::move(*result);
}

void ok_or_exit(zeus::Result<void> result, const char* what) {
  if (!result) {
    std::cerr << what << ": " << result.error().to_string() << "\n";
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  zeus::SystemClock clock;
  zeus::Devices devices =
      value_or_exit(zeus::discover(zeus::DiscoverOptions::from_environment()), "discover");
  if (devices.gpus.empty()) {
    std::cerr << "no GPU found (set ZEUS_NVML_PATH to a libnvidia-ml.so.1)\n";
    return 1;
  }
  zeus::EnergyMonitorOptions monitor_options;
  monitor_options.gpu_indices = std::vector<int>{0};
  monitor_options.cpu_indices = std::vector<int>{};
  auto monitor = value_or_exit(zeus::EnergyMonitor::create(devices, clock, monitor_options),
                               "monitor");

  std::unique_ptr<zeus::Store> store =
      args.store_path.empty() ? zeus::make_memory_store()
                              : value_or_exit(zeus::open_sqlite_store(args.store_path), "store");
  zeus::BatchSizeOptimizer optimizer(*store);
  std::unique_ptr<zeus::BatchSizeService> service =
      zeus::make_local_batch_size_service(optimizer);

  const auto range = value_or_exit(devices.gpus[0]->power_limit_range_mw(), "power limit range");
  zeus::TrainingLoopOptions options;
  options.job.job_id = "libtorch-example";
  options.job.job_id_prefix = "libtorch";
  options.job.batch_sizes = {16, 32, 64};
  options.job.default_batch_size = 32;
  options.job.target_metric = args.target;
  options.job.max_epochs = args.max_epochs;
  options.job.mab_seed = 1;
  options.job.max_power_w = range.max_mw / 1000.0;
  options.job.gpu_model = devices.gpus[0]->name();
  options.power_limit.warmup_steps = 3;
  options.power_limit.profile_steps = 10;
  options.power_limit.step_w = 100;
  auto loop = value_or_exit(
      zeus::TrainingLoop::create(*service, *monitor, devices, clock, options), "training loop");

  // The task: XOR of the signs of two of eight features (a boundary a linear model cannot draw),
  // so the run takes a few epochs; one thread, so a run's accuracies repeat exactly.
  torch::set_num_threads(1);
  torch::manual_seed(0);
  const torch::Tensor x = torch::randn({8192, 8});
  const torch::Tensor y = (x.select(1, 0) * x.select(1, 1) > 0).to(torch::kLong);
  torch::nn::Sequential model(torch::nn::Linear(8, 128), torch::nn::ReLU(), torch::nn::Linear(128, 128),
                              torch::nn::ReLU(), torch::nn::Linear(128, 2));
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.5));

  const int64_t batch_size = loop->batch_size();
  std::cout << "batch_size " << batch_size << " (the batch-size optimizer's choice for this run; "
            << "default 32)\n";
  const zeus::PowerLimitOptimizer* plo = loop->power_limit_optimizer();
  bool profile_shown = false;
  for (int epoch : loop->epochs()) {
    for (int64_t start = 0; start < x.size(0); start += batch_size) {
      ok_or_exit(loop->on_step_begin(), "step begin");
      const int64_t end = std::min<int64_t>(start + batch_size, x.size(0));
      sgd.zero_grad();
      torch::Tensor loss =
          torch::nn::functional::cross_entropy(model->forward(x.slice(0, start, end)),
                                               y.slice(0, start, end));
      loss.backward();
      sgd.step();
      ok_or_exit(loop->on_step_end(), "step end");
    }
    double accuracy = 0;
    {
      torch::NoGradGuard no_grad;
      accuracy = model->forward(x).argmax(1).eq(y).to(torch::kDouble).mean().item<double>();
    }
    const double energy_before = loop->energy_j(), time_before = loop->time_s();
    const zeus::ReportDecision decision = value_or_exit(loop->report_metric(accuracy), "report");
    if (plo && plo->optimal_setting() && !profile_shown) {
      // The just-in-time profile, once: each limit's energy and time per profiled step.
      profile_shown = true;
      for (const zeus::KnobMeasurement& m : plo->measurements()) {
        std::cout << "profiled power_limit_w " << m.setting << " energy_j " << m.energy_j
                  << " time_s " << m.time_s
                  << (m.setting == *plo->optimal_setting() ? " chosen" : "") << "\n";
      }
    }
    // Epoch energy and time; the batch-size optimizer's decision in its own words.
    std::cout << "epoch " << epoch << " accuracy " << accuracy << " energy_j "
              << loop->energy_j() - energy_before << " time_s " << loop->time_s() - time_before
              << (decision.stop_train ? " stop" : "") << " (" << decision.message << ")\n";
  }
  if (loop->error()) {
    std::cerr << "training stopped: " << loop->error()->to_string() << "\n";
    return 1;
  }
  std::cout << "optimal_power_limit_w "
            << (plo && plo->optimal_setting() ? std::to_string(*plo->optimal_setting()) : "none")
            << "\n"
            << "converged "
            << (loop->last_decision() && loop->last_decision()->converged ? "yes" : "no") << "\n"
            << "epochs " << loop->epochs_done() << "\n"
            << "energy_j " << loop->energy_j() << "\n"
            << "time_s " << loop->time_s() << std::endl;
  return 0;
}
