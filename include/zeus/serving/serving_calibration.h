// Serving calibration: the points `zeus proxy calibrate` measures against a running inference
// server (per locked SM clock and concurrency: tokens/s, TTFT and TPOT quantiles, power) and the
// fit that turns them into the governor's ServingProfile (zeus/serving/serving_governor.h), so that
// `zeus proxy --govern --serving-profile FILE` starts from this GPU and server rather than the
// parametric model (the governor still corrects it online).
// The fit (pure, least squares; docs/proxy.md, "Calibration"):
//   TPOT(f, C) = memory_s + decode_s_per_seq x C x (max / f)            over every point (median
//   TPOT) TTFT(f, C) = memory_s + prefill_s_per_token x P x (max / f)         over the points of
//   the lowest
//                                                                       concurrency (median TTFT)
//   power(f, C) = base_w + k x ((f/max)^3 x share + 0.5 (f/max)^1.5 x (1 - share)), share the
//   compute part of the fitted TPOT; compute_w = k, memory_w = k / 2; idle_w as measured.
// Failure: InvalidArgument with fewer than two clocks or three points, or non-positive values.
#pragma once

#include <vector>

#include "zeus/common/result.h"
#include "zeus/serving/serving_governor.h"

namespace zeus {

struct ServingCalibrationPoint {
  double clock_mhz = 0;
  int concurrency = 1;
  int requests = 0;  // finished during the point
  double tokens_per_s = 0;
  double ttft_p50_s = 0, ttft_p99_s = 0;
  double tpot_p50_s = 0, tpot_p99_s = 0;
  double power_w = 0;  // mean over the point, all measured GPUs
  double j_per_token = 0;
};

// prompt_tokens: the synthetic prompts' size; idle_w: the GPUs' power with no request.
Result<ServingProfile> fit_serving_profile(const std::vector<ServingCalibrationPoint>& points,
                                           double prompt_tokens, double idle_w);

}  // namespace zeus
