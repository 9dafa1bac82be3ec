#include "serving/live/calibrate.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

#include "proxy/energy_reader.h"
#include "proxy/sse_scan.h"
#include "proxy/upstream.h"
#include "zeus/common/log.h"
#include "zeus/device_control/frequency_controller.h"
#include "zeus/serving/serving_governor.h"

namespace zeus::proxy {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(q * values.size()))];
}

Result<double> energy_j(GpuEnergyReader& reader) {
  auto each = reader.read_each_j();
  if (!each) return fail(each.error());
  double sum = 0;
  for (double j : *each) sum += j;
  return sum;
}

struct Finished {
  double ttft_s = 0, tpot_s = -1;
  int64_t tokens = 0;
};

// What one point's clients did: the requests that finished, and those still streaming at the
// point's deadline, which were cut.
struct PointRun {
  std::vector<Finished> done;
  int cut = 0;
};

// The grace after a point's `seconds` for the requests in flight to finish; past it they are
// cut (a server that ignores max_tokens, or streams keep-alive comments, must not hold a point
// with the GPU locked for ever).
double point_grace_s(double seconds) { return std::max(5.0, seconds); }

// C clients for `seconds`; answers the requests that finished (a failed one: its error).
Result<PointRun> run_point(http::HttpClient& client, const std::string& target,
                           const std::string& body, int clients, double seconds,
                           double timeout_s) {
  std::mutex mu;
  std::vector<Finished> done;
  int cut = 0;
  const double deadline = seconds + point_grace_s(seconds);
  std::optional<Error> failure;
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      while (since(start) < seconds) {
        SseScanner scanner(false);
        const Clock::time_point t0 = Clock::now();
        double first = -1;
        int64_t tokens = 0;
        bool past_deadline = false;
        auto answer = client.stream(
            "POST", target, body, {{"Content-Type", "application/json"}},
            [&](std::string_view piece) {
              const int64_t n = scanner.feed(piece);
              if (n > 0 && first < 0) first = since(t0);
              tokens += n;
              past_deadline = since(start) > deadline;
              return !past_deadline;
            },
            std::min(timeout_s, std::max(1.0, deadline - since(start))));
        const double end = since(t0);
        std::lock_guard<std::mutex> lock(mu);
        if (past_deadline || (!answer && since(start) > deadline)) {
          ++cut;
          return;
        }
        if (!answer || answer->status != 200 || first < 0) {
          if (!failure) {
            failure =
                !answer ? answer.error()
                        : Error{ErrorCode::kUnavailable, "HTTP " + std::to_string(answer->status) +
                                                             (first < 0 ? ", no token" : "") +
                                                             ": " + answer->body.substr(0, 200)};
          }
          return;
        }
        Finished f;
        f.ttft_s = first;
        f.tokens = tokens;
        if (tokens >= 2) f.tpot_s = (end - first) / static_cast<double>(tokens - 1);
        done.push_back(f);
      }
    });
  }
  for (auto& t : threads) t.join();
  if (failure) return fail(*failure);
  return PointRun{std::move(done), cut};
}

}  // namespace

// Neither speed nor power moved between the highest and the lowest clock (at any one
// concurrency): the server is not on these GPUs, or its work does not depend on the clock. The
// fit would describe nothing; say so.
static void warn_if_clock_moved_nothing(const CalibrationRun& run) {
  if (run.points.empty()) return;
  double top = 0, bottom = 1e18;
  for (const ServingCalibrationPoint& p : run.points) {
    top = std::max(top, p.clock_mhz);
    bottom = std::min(bottom, p.clock_mhz);
  }
  if (!(bottom < 0.75 * top)) return;  // a range where a clock-bound server moves clearly
  for (const ServingCalibrationPoint& high : run.points) {
    if (high.clock_mhz != top) continue;
    for (const ServingCalibrationPoint& low : run.points) {
      if (low.clock_mhz != bottom || low.concurrency != high.concurrency) continue;
      // 10 %: a short point's noise (a few requests, a loaded machine) reaches 5 %, while a
      // server on these GPUs changes its power or speed by tens of % over such a clock range.
      const bool same_speed = std::abs(low.tokens_per_s - high.tokens_per_s) <=
                              0.10 * std::max(high.tokens_per_s, 1e-9);
      const bool same_power =
          std::abs(low.power_w - high.power_w) <= 0.10 * std::max(high.power_w, 1e-9);
      if (!same_speed || !same_power) return;
    }
  }
  log_warning("zeus proxy calibrate: neither speed nor power moved with the clock (" +
              std::to_string(static_cast<int>(top)) + " vs " +
              std::to_string(static_cast<int>(bottom)) +
              " MHz): is the server running on --gpus? The profile describes no clock effect; "
              "the governor would save nothing with it");
}

Result<CalibrationRun> run_calibration(Devices& devices, const CalibrateOptions& options,
                                       const std::function<void(const std::string&)>& progress) {
  if (options.concurrency.empty() || !(options.seconds > 0) || options.prompt_tokens < 1 ||
      options.output_tokens < 2) {
    return fail(ErrorCode::kInvalidArgument,
                "calibrate: concurrency levels, seconds > 0, prompts of >= 1 token and answers "
                "of >= 2 tokens are needed");
  }
  auto reader = GpuEnergyReader::create(devices, options.gpu_indices);
  if (!reader) return fail(reader.error());
  int most = 1;
  for (int c : options.concurrency) most = std::max(most, c);
  auto client = upstream_client(options.upstream, options.timeout_s, static_cast<size_t>(most));
  if (!client) return fail(client.error());
  auto target = upstream_target(options.upstream.path, options.path);
  if (!target) return fail(target.error());
  nlohmann::json request = {{"max_tokens", options.output_tokens},
                            {"stream", true},
                            {"ignore_eos", true}};  // vLLM: every answer its full length
  std::string prompt;
  for (int i = 0; i < options.prompt_tokens; ++i) prompt += "word ";
  request["prompt"] = prompt;
  if (!options.model.empty()) request["model"] = options.model;
  const std::string body = request.dump();

  std::vector<std::unique_ptr<FrequencyController>> controllers;
  for (int index : reader->indices()) {
    Gpu& gpu = *devices.gpus[static_cast<size_t>(index)];
    auto controller = FrequencyController::start(gpu, {});
    if (!controller) {
      return fail(controller.error().code, "cannot set the clocks of GPU " + std::to_string(index) +
                                               ": " + controller.error().message);
    }
    controllers.push_back(std::move(*controller));
  }
  CalibrationRun run;
  run.gpu_name = devices.gpus[static_cast<size_t>(reader->indices().front())]->name();
  std::vector<uint32_t> clocks = options.clocks_mhz;
  if (clocks.empty()) {
    for (double f : serving_clock_ladder(controllers.front()->supported_sm_clocks_mhz())) {
      clocks.push_back(static_cast<uint32_t>(f));
    }
  }
  std::sort(clocks.begin(), clocks.end(), std::greater<>());
  clocks.erase(std::unique(clocks.begin(), clocks.end()), clocks.end());
  // What the fit needs, before any clock is locked: two clocks, three points.
  if (clocks.size() < 2 || clocks.size() * options.concurrency.size() < 3) {
    return fail(ErrorCode::kInvalidArgument,
                "calibrate: the fit needs points at two clocks or more and three points or more; "
                "--clocks gives " + std::to_string(clocks.size()) + " clock(s) and --concurrency " +
                    std::to_string(options.concurrency.size()) + " level(s)");
  }
  // Every clock must be one the GPUs support: a refused lock would leave the previous clock in
  // force and the point would be labelled with a clock never applied.
  for (const auto& controller : controllers) {
    const std::vector<uint32_t>& supported = controller->supported_sm_clocks_mhz();
    if (supported.empty()) continue;
    for (uint32_t mhz : clocks) {
      if (std::find(supported.begin(), supported.end(), mhz) != supported.end()) continue;
      uint32_t nearest = supported.front();
      for (uint32_t f : supported) {
        if (std::abs(static_cast<double>(f) - mhz) < std::abs(static_cast<double>(nearest) - mhz)) {
          nearest = f;
        }
      }
      const auto [lo, hi] = std::minmax_element(supported.begin(), supported.end());
      return fail(ErrorCode::kInvalidArgument,
                  "calibrate: --clocks " + std::to_string(mhz) +
                      " MHz is not a clock this GPU supports (" + std::to_string(*lo) + "-" +
                      std::to_string(*hi) + " MHz; the nearest is " + std::to_string(nearest) +
                      " MHz): give supported clocks, or leave --clocks out for the ladder");
    }
  }
  // Idle power: a second with no request, at the maximum clock.
  auto idle0_read = energy_j(*reader);
  if (!idle0_read) return fail(idle0_read.error());
  const double idle0 = *idle0_read;
  const Clock::time_point idle_start = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  auto idle1_read = energy_j(*reader);
  if (!idle1_read) return fail(idle1_read.error());
  const double idle1 = *idle1_read;
  run.idle_w = (idle1 - idle0) / since(idle_start);
  const size_t total = clocks.size() * options.concurrency.size();
  for (uint32_t mhz : clocks) {
    for (auto& controller : controllers) {
      controller->request(mhz);
      controller->flush();
      if (controller->applied_mhz() != mhz) {
        return fail(ErrorCode::kUnavailable,
                    "calibrate: the GPU refused to lock its SM clock at " + std::to_string(mhz) +
                        " MHz (it runs at " + std::to_string(controller->applied_mhz()) +
                        " MHz): no point is measured at a clock that was not applied");
      }
    }
    for (int c : options.concurrency) {
      auto e0_read = energy_j(*reader);
      if (!e0_read) return fail(e0_read.error());
      const double e0 = *e0_read;
      const Clock::time_point t0 = Clock::now();
      auto done = run_point(**client, *target, body, c, options.seconds, options.timeout_s);
      if (!done) {
        return fail(ErrorCode::kUnavailable, "calibrate: a request to " + options.upstream.text +
                                                 " failed at " + std::to_string(mhz) +
                                                 " MHz: " + done.error().message);
      }
      const double seconds = since(t0);
      auto e1_read = energy_j(*reader);
      if (!e1_read) return fail(e1_read.error());
      const double e1 = *e1_read;
      if (done->done.empty()) {
        return fail(ErrorCode::kUnavailable,
                    "calibrate: no request finished in " + std::to_string(options.seconds) +
                        " s at " + std::to_string(mhz) + " MHz" +
                        (done->cut > 0 ? " (" + std::to_string(done->cut) +
                                             " still streaming were cut " +
                                             std::to_string(static_cast<int>(
                                                 point_grace_s(options.seconds))) +
                                             " s after it: does the server honour max_tokens?)"
                                       : "") +
                        ": give --seconds more time");
      }
      bool streamed = false;
      for (const Finished& f : done->done) streamed = streamed || f.tpot_s >= 0;
      if (!streamed) {
        return fail(ErrorCode::kUnavailable,
                    "calibrate: the answers were not streamed token by token (each came in one "
                    "event, so no TPOT can be measured) at " +
                        std::to_string(mhz) +
                        " MHz: calibrate needs a server that streams tokens (vLLM, SGLang, "
                        "llama.cpp's server, TGI) with --output-tokens 2 or more");
      }
      ServingCalibrationPoint p;
      p.clock_mhz = mhz;
      p.concurrency = c;
      p.requests = static_cast<int>(done->done.size());
      std::vector<double> ttft, tpot;
      int64_t tokens = 0;
      for (const Finished& f : done->done) {
        ttft.push_back(f.ttft_s);
        if (f.tpot_s >= 0) tpot.push_back(f.tpot_s);
        tokens += f.tokens;
      }
      p.tokens_per_s = static_cast<double>(tokens) / seconds;
      p.ttft_p50_s = quantile(ttft, 0.5);
      p.ttft_p99_s = quantile(ttft, 0.99);
      p.tpot_p50_s = quantile(tpot, 0.5);
      p.tpot_p99_s = quantile(tpot, 0.99);
      p.power_w = (e1 - e0) / seconds;
      p.j_per_token = tokens > 0 ? (e1 - e0) / static_cast<double>(tokens) : 0;
      run.points.push_back(p);
      char line[256];
      std::snprintf(line, sizeof(line),
                    "[%zu/%zu] %u MHz x %d concurrent: %.1f tokens/s, TTFT p50 %.3f s, TPOT p50 "
                    "%.4f s, %.0f W, %.3f J/token (%d requests)",
                    run.points.size(), total, mhz, c, p.tokens_per_s, p.ttft_p50_s, p.tpot_p50_s,
                    p.power_w, p.j_per_token, p.requests);
      progress(std::string(line) + (done->cut > 0 ? "; " + std::to_string(done->cut) +
                                           " still streaming at the point's end were cut"
                                     : std::string()));
    }
  }
  for (auto& controller : controllers) {
    if (Result<void> restored = controller->stop(); !restored) return fail(restored.error());
  }
  warn_if_clock_moved_nothing(run);
  return run;
}

}  // namespace zeus::proxy
