// `zeus proxy calibrate`: measures the serving profile of this GPU and server (the points of
// zeus/serving/serving_calibration.h) by sweeping the SM clock against the running inference
// server with
// a synthetic streamed load at several concurrency levels. Each clock is locked through one
// FrequencyController per GPU (zeusd leases where ZEUSD_SOCK_PATH is set; restored at the end,
// on errors and on signals); at each clock and concurrency C, C clients send the same prompt
// back to back for `seconds`, and the point records the tokens/s, the TTFT and TPOT quantiles of
// the requests that finished and the GPUs' mean power over the point (energy counters). The
// idle power is measured first, at the maximum clock with no request.
// Failure: the device's (clocks, counters), or Unavailable naming the server when a point
// finished no request. Thread-safety: one call at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "proxy/upstream.h"
#include "zeus/common/result.h"
#include "zeus/device/device.h"
#include "zeus/serving/serving_calibration.h"

namespace zeus::proxy {

struct CalibrateOptions {
  UpstreamUrl upstream;  // http://host:port[/path]
  std::string path = "/v1/completions";
  std::string model;                 // sent as "model" when not empty
  std::vector<int> gpu_indices;      // empty: every GPU
  std::vector<uint32_t> clocks_mhz;  // empty: the GPU's ladder (serving_clock_ladder)
  std::vector<int> concurrency = {1, 4, 16};
  double seconds = 10;  // per point
  int prompt_tokens = 512;
  int output_tokens = 128;
  double timeout_s = 120;  // per request, to its head and between its pieces
};

struct CalibrationRun {
  std::string gpu_name;
  double idle_w = 0;
  std::vector<ServingCalibrationPoint> points;
};

Result<CalibrationRun> run_calibration(Devices& devices, const CalibrateOptions& options,
                                       const std::function<void(const std::string&)>& progress);

}  // namespace zeus::proxy
